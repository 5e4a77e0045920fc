import { pendingApprovals, replaceCall } from './approvals'
import type { StopReason } from './budget'
import { copyState, type RunState } from './state'
import type { Deps, Result } from './transition-types'

/** Pending approvals of a cancelled run are closed as denied, so no stale button can run them. */
export function cancelApprovals(state: RunState, now: number): RunState {
  let next = state
  for (const { stepIndex, call } of pendingApprovals(state)) {
    next = replaceCall(next, stepIndex, {
      ...call,
      status: 'denied',
      approval: {
        ...call.approval!,
        decision: 'denied',
        decidedBy: 'system',
        decidedAt: now,
        reason: 'cancelled',
      },
    })
  }
  return next
}

export function stop(
  state: RunState,
  reason: StopReason,
  deps: Deps,
  error?: string,
  answer = '',
): Result {
  const ok = reason === 'finish'
  const result: NonNullable<RunState['result']> = {
    ok,
    // Failure is explicit: never a half answer that looks like success (DESIGN §1.4).
    answer: ok ? answer : '',
    stopReason: reason,
    finishedAt: deps.now(),
  }
  if (error) result.error = error
  const next = copyState(state)
  next.phase = 'done'
  next.result = result
  return { state: next, event: { action: 'stop', stopReason: reason, bytes: 0 } }
}

/** What a cancelled run says about why: the recorded reason, or the abort's. */
export function cancelMessage(state: RunState, deps: Deps): string {
  if (state.cancelReason) return state.cancelReason
  const reason: unknown = deps.signal?.reason
  if (reason instanceof Error && reason.message) return reason.message
  return 'the run was cancelled'
}
