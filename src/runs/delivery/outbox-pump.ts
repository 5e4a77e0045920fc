import { logEvent } from '../log'
import type { DeliveryContext } from '../outbox/delivery-context'
import type { Outbox, OutboxEntry } from '../outbox/outbox'
import { deliverEntry } from './deliver-entry'
import { deliverRemoval, type RemovalContext } from './removal'

/** The run index's row (outbox-kinds.ts). */
export const INDEX_KIND = 'index'

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

  /**
   * Delivers every due entry except those of `skipKinds`: in order, and the run index's row
   * beside them (it is written from the run as it is when delivered and waits for no other
   * entry, and D1 slow to answer must not hold a callback back).
   */
  async deliverDue(...skipKinds: string[]): Promise<void> {
    const index = skipKinds.includes(INDEX_KIND) ? undefined : this.deliverIndex()
    await Promise.all([index, this.#deliverInOrder([INDEX_KIND, ...skipKinds])])
  }

  /**
   * Delivers the run index's row when it is due (never twice at once: the caller awaits it
   * before the next `deliverDue`). The alarm writes it beside the slice: D1's first query in an
   * isolate (its schema check) once held a fresh process's first model call back by 70–210 ms
   * (docs/development.md#the-peer-bench).
   */
  async deliverIndex(): Promise<void> {
    const entry = this.outbox.get(INDEX_KIND)
    if (entry?.status === 'pending' && entry.nextAt <= Date.now()) await this.deliverOne(entry)
  }

  /** Delivers the due entries of other kinds than `skip`, one after another. */
  async #deliverInOrder(skip: string[]): Promise<void> {
    for (const entry of this.outbox.due(Date.now())) {
      if (!this.context()) return
      if (skip.includes(entry.kind)) continue
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
