import type { RunState } from '../kernel/state'
import { happened, type TransitionEvent } from '../kernel/transition'
import { redact } from '../security/redact'

/**
 * A slice that threw (storage failed, a tool set that can no longer be built): the run ends
 * with `internal_error` and the redacted reason, instead of the alarm retrying forever.
 */
export function internalFailure(
  state: RunState,
  err: unknown,
  now: number,
): { state: RunState; event: TransitionEvent } {
  const message = redact(err instanceof Error ? `${err.name}: ${err.message}` : String(err))
  const failed: RunState = {
    ...state,
    phase: 'done',
    modelCall: null,
    result: {
      ok: false,
      answer: '',
      stopReason: 'internal_error',
      error: message,
      output: null,
      finishedAt: now,
    },
  }
  const event = {
    ...happened('stop', { stopReason: 'internal_error' }),
    runId: state.id,
    phase: 'done' as const,
    ms: 0,
  }
  return { state: failed, event }
}
