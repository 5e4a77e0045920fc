import type { EventLog } from './event-log'
import type { RunEvent } from './events'

/** A comment line every 15 s keeps proxies from closing an idle stream. */
export const HEARTBEAT_MS = 15_000
/** Events read from storage per write to a subscriber. */
const BATCH = 200

const encoder = new TextEncoder()

/** One event in the `text/event-stream` format: `id` is its sequence number in the run. */
export function formatSse(event: RunEvent): string {
  return `id: ${event.seq}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`
}

interface Subscriber {
  writer: WritableStreamDefaultWriter<Uint8Array>
  /** The last sequence number written to this subscriber. */
  sent: number
}

/**
 * The live subscribers of one run's events, held by its Durable Object. Every subscriber is sent
 * the stored rows after the last one it got, read from the event log, so history and live events
 * join without a gap or a duplicate, however many subscribers there are.
 */
export class EventHub {
  readonly #subscribers = new Set<Subscriber>()
  #heartbeat: ReturnType<typeof setInterval> | undefined

  constructor(
    private readonly log: EventLog,
    /** True once the run's final event is stored: streams end after sending it. */
    private readonly finished: () => boolean,
  ) {}

  /** A stream of the events after `after`, then live ones until the run finishes. */
  subscribe(after: number): ReadableStream<Uint8Array> {
    const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>()
    const sub: Subscriber = { writer: writable.getWriter(), sent: after }
    // Reconnecting clients wait 3 s (EventSource's default is browser-specific).
    this.#write(sub, 'retry: 3000\n\n')
    this.#subscribers.add(sub)
    sub.writer.closed.catch(() => this.#drop(sub))
    this.#send(sub)
    this.#arm()
    return readable
  }

  /** Sends newly stored events to every subscriber; call after the transaction commits. */
  publish(): void {
    for (const sub of this.#subscribers) this.#send(sub)
  }

  /** Writes frames that are not stored (live deltas) to every subscriber, as they are now. */
  sendLive(frames: string): void {
    for (const sub of this.#subscribers) this.#write(sub, frames)
  }

  /** Ends every stream (the run was deleted: nothing more will come). */
  close(): void {
    for (const sub of this.#subscribers) sub.writer.close().catch(() => {})
    this.#subscribers.clear()
    this.#arm()
  }

  get size(): number {
    return this.#subscribers.size
  }

  #send(sub: Subscriber): void {
    for (;;) {
      const events = this.log.after(sub.sent, BATCH)
      if (!events.length) break
      this.#write(sub, events.map(formatSse).join(''))
      sub.sent = events.at(-1)!.seq
      if (events.length < BATCH) break
    }
    if (this.finished() && sub.sent >= this.log.lastSeq()) {
      this.#subscribers.delete(sub)
      sub.writer.close().catch(() => {})
      this.#arm()
    }
  }

  #write(sub: Subscriber, text: string): void {
    // Writes queue in order; a reader that went away fails them, and is dropped.
    sub.writer.write(encoder.encode(text)).catch(() => this.#drop(sub))
  }

  #drop(sub: Subscriber): void {
    if (!this.#subscribers.delete(sub)) return
    this.#arm()
  }

  /** One timer for all subscribers, running only while there are some. */
  #arm(): void {
    if (this.#subscribers.size && !this.#heartbeat) {
      this.#heartbeat = setInterval(() => {
        for (const sub of this.#subscribers) this.#write(sub, ': heartbeat\n\n')
      }, HEARTBEAT_MS)
    } else if (!this.#subscribers.size && this.#heartbeat) {
      clearInterval(this.#heartbeat)
      this.#heartbeat = undefined
    }
  }
}
