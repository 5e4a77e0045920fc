import { deliver } from './deliver'
import type { DeliveryContext } from '../outbox/delivery-context'
import { logEvent } from '../log'
import type { OutboxEntry } from '../outbox/outbox'
import { PROGRESS_ID, requeueStaleProgress } from '../slack/slack-progress'
import { STATUS_ID, requeueStaleStatus } from '../slack/slack-status'
import { STREAM_ID, requeueStream } from '../slack/slack-stream'
import { changesIndex } from '../index/run-index-entry'

/**
 * Delivers one outbox entry from the run as it is now (`ctx.state`); a failure is recorded on
 * the entry for a retry, and logged, never thrown.
 */
export async function deliverEntry(entry: OutboxEntry, ctx: DeliveryContext): Promise<void> {
  const { env, outbox } = ctx
  const runId = ctx.state.id
  try {
    const result = await deliver(entry.kind, entry, ctx)
    const at = Date.now()
    if (entry.kind === 'index') {
      // Written with the run's next write, not in a commit of its own: lost, the row is
      // written again, the same (the index keeps the newest version it was given).
      outbox.later(() => {
        outbox.delivered(entry.id, at, result)
        requeueStaleIndex(ctx, at)
      })
    } else {
      outbox.delivered(entry.id, at, result)
    }
    if (entry.id === PROGRESS_ID)
      requeueStaleProgress(outbox, ctx.latestState?.() ?? ctx.state, Date.now())
    if (entry.id === STATUS_ID) requeueStaleStatus(ctx, Date.now())
    if (entry.id === STREAM_ID) requeueStream(ctx, Date.now())
    logEvent(env, 'delivered', { runId, delivery: entry.id, attempts: entry.attempts + 1 })
  } catch (err) {
    outbox.failed(entry, Date.now(), err as Error)
    logEvent(
      env,
      'delivery_failed',
      { runId, delivery: entry.id, attempts: entry.attempts + 1, error: (err as Error).message },
      'warn',
    )
  }
}

/**
 * The index row just written is of the run as it was when the delivery began; a change that
 * moves the index made while it waited for D1 (a person deciding) re-armed the same entry, which
 * `delivered` has just closed: it is due again, so the index never keeps the older row.
 */
function requeueStaleIndex(ctx: DeliveryContext, now: number): void {
  const latest = ctx.latestState?.()
  if (latest && latest !== ctx.state && changesIndex(ctx.state, latest)) {
    ctx.outbox.rearm('index', 'index', {}, now)
  }
}
