import { logEvent } from '../log'
import type { DeliveryContext } from '../outbox/delivery-context'
import type { Outbox, OutboxEntry } from '../outbox/outbox'
import { deliverEntry } from './deliver-entry'
import { deliverRemoval, type RemovalContext } from './removal'

/**
 * Delivers a run's due outbox entries (docs/architecture.md#layers): each from the run as it is
 * when its turn comes, a failure recorded on the entry for a retry. `context` is undefined once
 * the run is deleted or being deleted: such a run tells nobody anything more.
 */
export class OutboxPump {
  constructor(
    private readonly outbox: Outbox,
    private readonly context: () => DeliveryContext | undefined,
  ) {}

  /** Delivers every due entry, in order, except those of `skipKind`. */
  async deliverDue(skipKind?: string): Promise<void> {
    for (const entry of this.outbox.due(Date.now())) {
      if (!this.context()) return
      if (entry.kind === skipKind) continue
      await this.deliverOne(entry)
    }
  }

  /** Delivers one entry from the run as it is now; a failure is recorded for a retry. */
  async deliverOne(entry: OutboxEntry): Promise<void> {
    const ctx = this.context()
    if (ctx) await deliverEntry(entry, ctx)
  }

  /**
   * A deleted run's alarm: removes the index row and the Slack links, retried until done.
   * Returns when to try again (undefined: all done).
   */
  async deliverRemovals(context: Omit<RemovalContext, 'now'>): Promise<number | undefined> {
    for (const entry of this.outbox.due(Date.now())) {
      try {
        const result = await deliverRemoval(entry, { ...context, now: Date.now() })
        this.outbox.delivered(entry.id, Date.now(), result)
      } catch (err) {
        this.outbox.failed(entry, Date.now(), err as Error)
        const runId = context.runId
        logEvent(context.env, 'delivery_failed', { runId, delivery: entry.id }, 'warn')
      }
    }
    return this.outbox.nextDue()
  }
}
