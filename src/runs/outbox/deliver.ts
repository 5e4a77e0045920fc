import { DeliveryError } from '../../errors/delivery-error'
import { toApiResult } from '../api-result'
import { deliverCallback } from './callback'
import type { DeliveryContext } from './delivery-context'
import type { OutboxEntry } from './outbox'
import { writeRunIndex } from '../index/run-index'
import { runIndexEntry } from '../index/run-index-entry'
import { deliverSlack } from '../slack/slack-delivery'
import { deliverOtel, OTEL_KIND } from '../otel/otel-delivery'
import { CANCEL_CHILD_KIND, deliverFamily, PARENT_KIND } from './family-delivery'

/** Delivers one outbox entry; throws DeliveryError to be retried later. */
export async function deliver(entry: OutboxEntry, ctx: DeliveryContext): Promise<unknown> {
  if (entry.kind === 'callback') {
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
  if (entry.kind === 'callback.event') {
    const seq = (entry.payload as { seq: number }).seq
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
  if (entry.kind === 'index') {
    if (!ctx.runIndex) throw new DeliveryError('the Worker has no RUN_INDEX (D1) binding')
    const last = ctx.events?.last()
    const at = last ? Date.parse(last.at) : ctx.state.createdAt
    return writeRunIndex(ctx.runIndex, runIndexEntry(ctx.state, ctx.info, last?.seq ?? 0, at))
  }
  if (entry.kind.startsWith('slack.')) return deliverSlack(entry, ctx)
  if (entry.kind === PARENT_KIND || entry.kind === CANCEL_CHILD_KIND)
    return deliverFamily(entry, ctx)
  if (entry.kind === OTEL_KIND) return deliverOtel(entry, ctx)
  throw new DeliveryError(`unknown delivery kind "${entry.kind}"`, { retryable: false })
}
