import type { Outcome } from './outcome'
import type { Tool } from './tool'

/**
 * Who may let a side effect run, from strictest to loosest. A run may narrow the
 * configured policy, never widen it (`narrowPolicy`).
 */
export type ConfirmMode = 'deny' | 'dry_run' | 'ask' | 'allowlist' | 'allow'
export const CONFIRM_MODES: readonly ConfirmMode[] = [
  'deny',
  'dry_run',
  'ask',
  'allowlist',
  'allow',
]

export interface ConfirmPolicy {
  mode: ConfirmMode
  /** With `allowlist`: side-effecting tools that run without asking. Others are asked. */
  tools?: string[]
}

/** What the policy says about one side-effecting call. */
export type ConfirmVerdict = 'run' | 'deny' | 'dry_run' | 'ask'

/** A caller-supplied decision for one call (for `react()` in memory, where no human waits). */
export type ConfirmHook = (
  call: { id: string; name: string; args: Record<string, unknown> },
  tool: Tool,
) => boolean | Promise<boolean>

export function verdictFor(policy: ConfirmPolicy, tool: Tool): ConfirmVerdict {
  if (!tool.sideEffect) return 'run'
  switch (policy.mode) {
    case 'deny':
      return 'deny'
    case 'dry_run':
      return 'dry_run'
    case 'ask':
      return 'ask'
    case 'allowlist':
      return policy.tools?.includes(tool.name) ? 'run' : 'ask'
    case 'allow':
      return 'run'
  }
}

/** The policy a run asks for when it narrows the configured one; refused when it would widen it. */
export function narrowPolicy(
  configured: ConfirmPolicy,
  requested: ConfirmPolicy | undefined,
): Outcome<{ policy: ConfirmPolicy }> {
  if (!requested) return { ok: true, policy: configured }
  const rank = (m: ConfirmMode) => CONFIRM_MODES.indexOf(m)
  if (rank(requested.mode) > rank(configured.mode)) {
    return {
      ok: false,
      error: `confirm policy "${requested.mode}" is looser than the configured "${configured.mode}"; a run may only narrow it`,
    }
  }
  if (requested.mode === 'allowlist' && configured.mode === 'allowlist') {
    const allowed = configured.tools ?? []
    const extra = (requested.tools ?? []).filter((t) => !allowed.includes(t))
    if (extra.length) {
      return { ok: false, error: `tools ${extra.join(', ')} are not in the configured allowlist` }
    }
  }
  return { ok: true, policy: requested }
}
