import { describeThrown } from './describe-thrown'
import { verdictFor, type ConfirmPolicy, type ConfirmVerdict } from './confirm'
import type { CallPolicy, PolicyVerdictRecord } from './state'
import type { AgentPolicy, CodePolicy, PolicyContext, Tool } from './tool'

/**
 * Policies as code (docs/human-in-the-loop.md#policies-as-code): a tool's `policy` and an agent's
 * decide per call (`allow`, `ask`, `deny`, with a reason), within the run's confirm policy, never
 * wider; a tool's `shadowPolicy` is asked too and only recorded. What each said is kept on the call.
 */

/** How strict each verdict is: the stricter of the two applies. */
const STRICTNESS: Record<ConfirmVerdict, number> = { run: 0, ask: 1, dry_run: 2, deny: 3 }

const AS_CONFIRM: Record<PolicyVerdictRecord['verdict'], ConfirmVerdict> = {
  allow: 'run',
  ask: 'ask',
  deny: 'deny',
}

/**
 * The verdict on one call: the confirm policy's, made stricter by the tool's `policy` and the
 * agent's (`agentPolicy`, asked about every call of its runs): the strictest applies, so neither
 * can widen what the other, or the confirm policy, allows. The record says what each said; null
 * for a call with no code policy at all.
 */
export function decidePolicy(
  confirm: ConfirmPolicy,
  tool: Tool,
  args: unknown,
  ctx: PolicyContext,
  agentPolicy?: AgentPolicy,
): { verdict: ConfirmVerdict; record: CallPolicy | null } {
  const configured = verdictFor(confirm, tool)
  if (!tool.policy && !tool.shadowPolicy && !agentPolicy) {
    return { verdict: configured, record: null }
  }
  const own = tool.policy ? ask(tool.policy, args, ctx) : null
  const shadow = tool.shadowPolicy ? ask(tool.shadowPolicy, args, ctx) : null
  const call = { name: tool.name, args, sideEffect: tool.sideEffect }
  const agent = agentPolicy ? ask((a, c) => agentPolicy(call, c), args, ctx) : null
  let verdict = configured
  for (const said of [own, agent]) {
    const coded = said ? AS_CONFIRM[said.verdict] : configured
    if (STRICTNESS[coded] > STRICTNESS[verdict]) verdict = coded
  }
  return { verdict, record: { configured, applied: verdict, policy: own, shadow, agent } }
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
