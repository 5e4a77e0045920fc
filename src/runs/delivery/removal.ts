import { DeliveryError } from '../../errors/delivery-error'
import type { EnvVars } from '../../env-vars'
import { deleteFromIndex } from '../index/run-index'
import { notifyRunList, type RunListHub } from '../index/run-list-hub'
import type { OutboxEntry } from '../outbox/outbox'
import type { OutboxResult } from '../outbox/outbox-kinds'
import { slackThreadStub } from '../slack-place'
import type { SlackThread } from '../slack-thread'
import { CANCEL_CHILD_KIND, cancelChild } from './family-delivery'

/** What a deleted run's removals are given: the run's id and the bindings they write to. */
export interface RemovalContext {
  runId: string
  runIndex: D1Database | undefined
  runList: DurableObjectNamespace<RunListHub> | undefined
  env: EnvVars
  slackThreads: DurableObjectNamespace<SlackThread> | undefined
  runs: DurableObjectNamespace | undefined
  now: number
}

/** Delivers one of a deleted run's removals; throws DeliveryError to be retried later. */
export async function deliverRemoval(
  entry: OutboxEntry,
  ctx: RemovalContext,
): Promise<OutboxResult> {
  if (entry.kind === 'forget.index') {
    if (!ctx.runIndex) throw new DeliveryError('the Worker has no RUN_INDEX (D1) binding')
    await deleteFromIndex(ctx.runIndex, ctx.runId, ctx.now)
    // Entries queued before the owner was recorded have none: only full readers hear of them.
    const owner = entry.payload.owner ?? null
    await notifyRunList(ctx.runList, ctx.env, { type: 'run_deleted', id: ctx.runId }, owner)
    return undefined
  }
  if (entry.kind === 'forget.slack') {
    if (!ctx.slackThreads) throw new DeliveryError('the Worker has no SLACK_THREADS binding')
    const { places } = entry.payload
    for (const place of places) await slackThreadStub(ctx.slackThreads, place).forget(ctx.runId)
    return { places: places.length }
  }
  if (entry.kind === CANCEL_CHILD_KIND) {
    if (!ctx.runs) throw new DeliveryError('the Worker has no RUNS binding')
    const why = `its parent run ${ctx.runId} was deleted`
    return cancelChild(ctx.runs, entry.payload.runId, ctx.runId, why)
  }
  throw new DeliveryError(`a deleted run delivers nothing but removals, not "${entry.kind}"`, {
    retryable: false,
  })
}
