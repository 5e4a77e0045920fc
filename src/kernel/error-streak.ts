import type { Call, RunState } from './state'

/**
 * One streak of failed steps of every kind (docs/models.md, "One streak of failed steps"): an
 * unusable reply, a step whose calls all failed (tool error, loop guard, denied, outcome unknown)
 * and a loop-guarded step each extend it, and a step with at least one working call ends it. The
 * run stops once the streak reaches its budget's `maxConsecutiveErrors`.
 */
export interface ErrorStreak {
  /** The run's `consecutiveErrors` after this step. */
  streak: number
  /** The streak has spent `maxConsecutiveErrors`: the run stops. */
  exhausted: boolean
}

/** The streak after a step that `failed` or not. */
export function errorStreak(state: RunState, failed: boolean): ErrorStreak {
  const streak = failed ? state.consecutiveErrors + 1 : 0
  return { streak, exhausted: streak >= state.budget.maxConsecutiveErrors }
}

/** A step with calls failed when every one of them did. */
export function callsFailed(calls: readonly Call[]): boolean {
  for (let k = 0; k < calls.length; k++) if (!isErrorKind(calls[k]!.kind)) return false
  return calls.length > 0
}

function isErrorKind(kind: Call['kind']): boolean {
  return (
    kind === 'tool_error' ||
    kind === 'loop_guard' ||
    kind === 'denied' ||
    kind === 'outcome_unknown'
  )
}
