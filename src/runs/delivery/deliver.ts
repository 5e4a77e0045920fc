import { DeliveryError } from '../../errors/delivery-error'
import { toApiResult } from '../api-result'
import { deliverCallback } from './callback'
import type { DeliveryContext, Deliverer } from '../outbox/delivery-context'
import type { OutboxEntryOf, OutboxKind, OutboxResult } from '../outbox/outbox-kinds'
import { listedEntry, writeRunIndex } from '../index/run-index'
import { notifyRunList } from '../index/run-list-hub'
import { runIndexEntry } from '../index/run-index-entry'
import { SLACK_DELIVERERS } from '../slack/slack-delivery'
import { deliverOtel } from '../otel/otel-delivery'
import { deliverCancelChild, deliverParent } from './family-delivery'

/** The final RunResult, to the run's callback_url. */
const callback: Deliverer<'callback'> = async (_entry, ctx) => {
  if (!ctx.info.callbackUrl)
    throw new DeliveryError('run has no callback_url', { retryable: false })
  return deliverCallback({
    url: ctx.info.callbackUrl,
    runId: ctx.state.id,
    deliveryId: `${ctx.state.id}:callback`,
    // The receiver matches the result to what it asked for by task and metadata.
    body: {
      ...toApiResult(ctx.state, ctx.skippedTools),
      task: ctx.state.task,
      ...(ctx.info.metadata ? { metadata: ctx.info.metadata } : {}),
    },
    secret: ctx.env.WEBHOOK_SECRET,
    nowMs: ctx.now,
  })
}

/** One run event, to the run's callback_url (`callback_events: "all"`). */
const callbackEvent: Deliverer<'callback.event'> = async (entry, ctx) => {
  const seq = entry.payload.seq
  const event = ctx.events?.get(seq)
  if (!ctx.info.callbackUrl || !event) {
    throw new DeliveryError(`run ${ctx.state.id} has no callback_url or no event ${seq}`, {
      retryable: false,
    })
  }
  return deliverCallback({
    url: ctx.info.callbackUrl,
    runId: ctx.state.id,
    deliveryId: `${ctx.state.id}:event:${seq}`,
    body: event,
    secret: ctx.env.WEBHOOK_SECRET,
    nowMs: ctx.now,
    eventType: event.type,
  })
}

/** The run's row in the run index, from the run as it is now. */
const index: Deliverer<'index'> = async (_entry, ctx) => {
  if (!ctx.runIndex) throw new DeliveryError('the Worker has no RUN_INDEX (D1) binding')
  const newest = ctx.events?.newest()
  const row = runIndexEntry(
    ctx.state,
    ctx.info,
    newest?.seq ?? 0,
    newest?.at ?? ctx.state.createdAt,
  )
  // Open run-list streams hear of what the index took, not of a write it refused as stale.
  if (await writeRunIndex(ctx.runIndex, row)) {
    await notifyRunList(ctx.runList, ctx.env, { type: 'run', ...listedEntry(row) }, row.owner)
  }
}

/** Removals are a deleted run's (deletion.ts): a live run has none to deliver. */
const notLive = async (entry: { kind: OutboxKind }): Promise<never> => {
  throw new DeliveryError(`unknown delivery kind "${entry.kind}"`, { retryable: false })
}

const DELIVERERS: { [K in OutboxKind]: Deliverer<K> } = {
  callback,
  'callback.event': callbackEvent,
  index,
  ...SLACK_DELIVERERS,
  otel: deliverOtel,
  parent: deliverParent,
  'cancel.child': deliverCancelChild,
  'forget.index': notLive,
  'forget.slack': notLive,
}

/** Delivers one outbox entry of a live run; throws DeliveryError to be retried later. */
export async function deliver<K extends OutboxKind>(
  kind: K,
  entry: OutboxEntryOf<K>,
  ctx: DeliveryContext,
): Promise<OutboxResult<K>> {
  // A kind this code does not know (a row written by other code) fails once, not forever.
  if (!Object.hasOwn(DELIVERERS, kind)) {
    throw new DeliveryError(`unknown delivery kind "${kind}"`, { retryable: false })
  }
  return DELIVERERS[kind](entry, ctx)
}
