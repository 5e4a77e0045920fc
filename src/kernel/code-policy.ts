import { describeThrown } from './describe-thrown'
import { verdictFor, type ConfirmPolicy, type ConfirmVerdict } from './confirm'
import type { CallPolicy, PolicyVerdictRecord } from './state'
import type { CodePolicy, PolicyContext, Tool } from './tool'

/**
 * Policies as code (docs/human-in-the-loop.md#policies-as-code): a tool's `policy` decides per
 * call (`allow`, `ask`, `deny`, with a reason), within the run's confirm policy, never wider;
 * its `shadowPolicy` is asked too and only recorded. What either said is kept on the call.
 */

/** How strict each verdict is: the stricter of the two applies. */
const STRICTNESS: Record<ConfirmVerdict, number> = { run: 0, ask: 1, dry_run: 2, deny: 3 }

const AS_CONFIRM: Record<PolicyVerdictRecord['verdict'], ConfirmVerdict> = {
  allow: 'run',
  ask: 'ask',
  deny: 'deny',
}

/**
 * The verdict on one call: the confirm policy's, made stricter by the tool's `policy`, and
 * the record of what the tool's policies said; null record for a tool without any.
 */
export function decidePolicy(
  confirm: ConfirmPolicy,
  tool: Tool,
  args: unknown,
  ctx: PolicyContext,
): { verdict: ConfirmVerdict; record: CallPolicy | null } {
  const configured = verdictFor(confirm, tool)
  if (!tool.policy && !tool.shadowPolicy) return { verdict: configured, record: null }
  const own = tool.policy ? ask(tool.policy, args, ctx) : null
  const shadow = tool.shadowPolicy ? ask(tool.shadowPolicy, args, ctx) : null
  const coded = own ? AS_CONFIRM[own.verdict] : configured
  const verdict = STRICTNESS[coded] > STRICTNESS[configured] ? coded : configured
  return { verdict, record: { configured, applied: verdict, policy: own, shadow } }
}

/** A policy's answer; one that throws or answers something else asks a person, and says why. */
function ask(policy: CodePolicy, args: unknown, ctx: PolicyContext): PolicyVerdictRecord {
  let out: unknown
  try {
    out = policy(args as never, ctx)
  } catch (err) {
    return { verdict: 'ask', reason: null, error: `the policy threw: ${describeThrown(err)}` }
  }
  const answer = typeof out === 'string' ? { verdict: out, reason: null } : out
  const verdict = (answer as { verdict?: unknown } | null)?.verdict
  if (verdict !== 'allow' && verdict !== 'ask' && verdict !== 'deny') {
    const got = out instanceof Promise ? 'a promise' : JSON.stringify(out)?.slice(0, 100)
    return {
      verdict: 'ask',
      reason: null,
      error: `the policy answered ${got}; it must return "allow", "ask" or "deny" (or { verdict, reason }) at once`,
    }
  }
  const reason = (answer as { reason?: unknown }).reason
  return { verdict, reason: typeof reason === 'string' ? reason.slice(0, 500) : null, error: null }
}
