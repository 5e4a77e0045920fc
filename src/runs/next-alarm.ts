import { nextApprovalExpiry } from '../kernel/approvals'
import type { RunState } from '../kernel/state'
import type { Outbox } from './outbox/outbox'
import { CHILD_POLL_MS } from './child-runs'

/**
 * When the run's object should wake next: now while the run can advance (or a cancel waits),
 * else the next approval expiry or delivery retry; undefined when nothing is due ever again.
 * `notBefore` holds a run back while its configuration is bad; `deleteAt` is when retention
 * deletes a finished run; `childEnded`: a child the run waits for has reported its end.
 */
export function nextAlarmAt(
  state: RunState,
  cancelPending: boolean,
  outbox: Outbox,
  notBefore: number | undefined,
  deleteAt?: number,
  childEnded = false,
): number | undefined {
  const times: number[] = []
  // A cancel that arrived while this alarm was delivering must not wait for the expiry.
  const cancelling = state.phase !== 'done' && (state.cancelRequested || cancelPending)
  if (state.phase === 'think' || state.phase === 'act' || cancelling) {
    times.push(notBefore ?? Date.now())
  }
  const expiry = state.phase === 'await_approval' ? nextApprovalExpiry(state) : undefined
  if (expiry !== undefined) times.push(expiry)
  // A run waiting for a child wakes when the child reports its end; the poll is the backup.
  if (state.phase === 'await_child' && !cancelling) {
    times.push(childEnded ? Date.now() : Date.now() + CHILD_POLL_MS)
  }
  const delivery = outbox.nextDue()
  if (delivery !== undefined) times.push(delivery)
  if (state.phase === 'done' && deleteAt !== undefined) times.push(deleteAt)
  return times.length ? Math.min(...times) : undefined
}
