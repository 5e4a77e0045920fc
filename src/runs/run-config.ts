import { ConfigError, loadConfig, type ServiceConfig } from '../config'
import { narrowPolicy } from '../kernel/confirm'
import type { RunState } from '../kernel/state'
import type { EnvVars } from '../env-vars'
import { redact } from '../security/redact'
import { logEvent } from './log'
import type { RunStorage } from './storage'

/** How long a run waits before looking at a bad configuration again. */
const CONFIG_RETRY_MS = 5 * 60_000

/**
 * The configuration a slice runs with, or when to look again. An operator fixes a bad setting;
 * the run waits for it instead of failing, and its view says why (GET /v1/runs/:id → blocked).
 */
export function configForSlice(
  env: EnvVars,
  storage: RunStorage,
  runId: string,
): { ok: true; config: ServiceConfig } | { ok: false; retryAt: number } {
  try {
    const config = loadConfig(env)
    if (storage.getValue('blocked')) storage.setValue('blocked', null)
    return { ok: true, config }
  } catch (err) {
    const retryAt = Date.now() + CONFIG_RETRY_MS
    const variable = err instanceof ConfigError ? err.variable : undefined
    storage.setValue('blocked', {
      code: 'misconfigured',
      ...(variable ? { variable } : {}),
      message: redact((err as Error).message),
      since: new Date(Date.now()).toISOString(),
      retryAt: new Date(retryAt).toISOString(),
    })
    logEvent(env, 'run_waiting_for_config', { runId, error: (err as Error).message }, 'warn')
    return { ok: false, retryAt }
  }
}

/**
 * The run as a slice starts it: a cancel recorded while no slice ran is applied, and a stricter
 * policy deployed while the run was going applies at once (a read-only rollout must reach runs in
 * flight); a looser one never widens what the run asked for.
 */
export function stateForSlice(
  state: RunState,
  cancel: { reason: string } | undefined,
  config: ServiceConfig,
): RunState {
  let next = state
  if (cancel && !next.cancelRequested) {
    next = { ...next, cancelRequested: true, cancelReason: cancel.reason }
  }
  if (!narrowPolicy(config.policy, next.policy).ok) next = { ...next, policy: config.policy }
  return next
}
