import type { RunState } from '../../kernel/state'
import type { SlackClient } from '../../slack/web-api'
import type { DeliveryContext } from '../outbox/delivery-context'
import type { Outbox } from '../outbox/outbox'
import type { OutboxResult, StatusSent } from '../outbox/outbox-kinds'
import { progressOf } from './slack-progress'

/**
 * The assistant thread status (`assistant.threads.setStatus`, docs/streaming.md#slack) of an app
 * configured as a Slack assistant app: what the run is doing, cleared when it ends. Like the
 * progress message, one outbox entry re-armed on change and read from the run when delivered.
 */
export const STATUS_ID = 'slack.status'
export const STATUS_GAP_MS = 1_000
// Slack shows the status after the app's name ("edgeloop is thinking…"); keep it short.
const STATUS_LIMIT = 100

/** `is thinking…`, `is running search_logs…`, `is waiting for approval…`; '' once done. */
export function threadStatus(state: RunState): string {
  const progress = progressOf(state)
  switch (progress.doing) {
    case 'done':
      return ''
    case 'thinking':
      return 'is thinking…'
    case 'waiting_for_approval':
      return 'is waiting for approval…'
    case 'calling': {
      const tools = [...new Set(progress.calls.map((c) => c.tool))].join(', ')
      const text = `is running ${tools}…`
      return text.length > STATUS_LIMIT ? `${text.slice(0, STATUS_LIMIT - 1)}…` : text
    }
  }
}

/** Inside a saved transition: queue a status when what the thread shows changed. */
export function queueStatus(
  outbox: Outbox,
  prev: RunState | undefined,
  next: RunState,
  now: number,
): void {
  if (prev && threadStatus(prev) === threadStatus(next)) return
  outbox.rearm(STATUS_ID, STATUS_ID, {}, now, STATUS_GAP_MS)
}

/** After a delivery: a change saved while it was in flight is queued now. */
export function requeueStaleStatus(ctx: DeliveryContext, now: number): void {
  const sent = sentStatus(ctx.outbox.get(STATUS_ID)?.result)?.status
  // The run as it is now: it may have moved on while the call was in flight.
  const state = ctx.latestState?.() ?? ctx.state
  if (sent === undefined || sent === threadStatus(state)) return
  ctx.outbox.rearm(STATUS_ID, STATUS_ID, {}, now, STATUS_GAP_MS)
}

export async function deliverStatus(
  ctx: DeliveryContext,
  client: SlackClient,
  where: { channel: string; thread: string },
): Promise<StatusSent> {
  const status = threadStatus(ctx.state)
  const last = sentStatus(ctx.outbox.get(STATUS_ID)?.result)
  // Nothing shown yet and nothing to show: no call.
  if ((last?.status ?? '') === status && (last || status === '')) return { status }
  await client.setStatus({ channel_id: where.channel, thread_ts: where.thread, status })
  return { status }
}

/** The status Slack shows, as the last delivery recorded it (none when it skipped). */
function sentStatus(result: OutboxResult<'slack.status'> | undefined): StatusSent | undefined {
  return result && 'status' in result ? result : undefined
}
