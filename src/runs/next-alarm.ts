import { nextApprovalExpiry } from '../kernel/approvals'
import type { RunState } from '../kernel/state'
import type { Outbox } from './outbox/outbox'

/**
 * When the run's object should wake next: now while the run can advance (or a cancel waits),
 * else the next approval expiry or delivery retry; undefined when nothing is due ever again.
 * `notBefore` holds a run back while its configuration is bad; `deleteAt` is when retention
 * deletes a finished run.
 */
export function nextAlarmAt(
  state: RunState,
  cancelPending: boolean,
  outbox: Outbox,
  notBefore: number | undefined,
  deleteAt?: number,
): number | undefined {
  const times: number[] = []
  // A cancel that arrived while this alarm was delivering must not wait for the expiry.
  const cancelling = state.phase !== 'done' && (state.cancelRequested || cancelPending)
  if (state.phase === 'think' || state.phase === 'act' || cancelling) {
    times.push(notBefore ?? Date.now())
  }
  const expiry = state.phase === 'await_approval' ? nextApprovalExpiry(state) : undefined
  if (expiry !== undefined) times.push(expiry)
  const delivery = outbox.nextDue()
  if (delivery !== undefined) times.push(delivery)
  if (state.phase === 'done' && deleteAt !== undefined) times.push(deleteAt)
  return times.length ? Math.min(...times) : undefined
}
