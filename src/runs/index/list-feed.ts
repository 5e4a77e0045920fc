import type { EventStreamLimits } from '../../config/event-streams'
import type { RunListEventBody } from '../../api/response-schemas'
import { maySeeRun } from '../../security/run-visibility'
import { HEARTBEAT_MS, streamRefusal } from '../events/event-stream'

/** Changes held for reconnecting readers; one that missed more is told to list again. */
export const HELD_CHANGES = 500

const encoder = new TextEncoder()
const PREAMBLE = encoder.encode('retry: 3000\n\n')
const HEARTBEAT = encoder.encode(': heartbeat\n\n')

/** A change of the run index, as the run-list stream sends it (`run` or `run_deleted`). */
export type RunListChange = Exclude<RunListEventBody, { type: 'ready' }>

/** Where a reader stands: the feed's epoch (one per hub instance) and the change's number. */
export interface ListPosition {
  epoch: string
  seq: number
}

/** The `Last-Event-ID` of a run-list stream: `<epoch>-<seq>`. */
export const LIST_EVENT_ID = /^([0-9a-f]{8})-(\d{1,15})$/

/** Who opens a run-list stream, from where, and the limits that apply. */
export interface ListStreamRequest {
  /** The principal's name: its streams are counted together. */
  holder: string
  /** The owner whose runs alone the holder may see, or undefined: every run (run-visibility.ts). */
  onlyOwner?: string
  /** The last event the reader got (a reconnect), or none (a new reader). */
  after?: ListPosition
  limits: EventStreamLimits
}

export type ListSubscription =
  | { ok: true; stream: ReadableStream<Uint8Array> }
  | { ok: false; code: 'too_many_streams'; scope: 'deployment' | 'token'; limit: number }

interface Held {
  seq: number
  /** The run's owner (null: no token's), for the visibility rule. */
  owner: string | null
  frame: Uint8Array
}

interface Reader {
  writer: WritableStreamDefaultWriter<Uint8Array>
  holder: string
  onlyOwner: string | undefined
  /** Bytes written and not yet taken by the reader. */
  queued: number
  queueBytes: number
}

/**
 * The run-list change feed, held by the one RunListHub object (docs/architecture.md#the-run-list-stream).
 * Each change the index takes is numbered, framed once and written to every open reader that
 * may see the run; the last HELD_CHANGES stay in memory, so a reader that reconnects with its
 * `Last-Event-ID` gets what it missed. A reader the feed cannot serve that way (the object was
 * restarted, or it missed more than is held) is told to list again (`ready` with `relist`).
 *
 * Bounded like a run's event stream: at most `limits.listStreams` readers, `limits.perToken` per
 * holder, and a reader that has not taken `limits.queueBytes` is sent `stream_closed` and closed.
 */
export class ListFeed {
  /** Changes are numbered per instance: a number from another instance means nothing here. */
  readonly epoch = Array.from(crypto.getRandomValues(new Uint8Array(4)), (b) =>
    b.toString(16).padStart(2, '0'),
  ).join('')
  #seq = 0
  #held: Held[] = []
  readonly #readers = new Set<Reader>()
  #heartbeat: ReturnType<typeof setInterval> | undefined

  /** Numbers the change and writes it to every reader that may see the run. */
  publish(change: RunListChange, owner: string | null): void {
    const seq = ++this.#seq
    const frame = encoder.encode(
      `id: ${this.epoch}-${seq}\nevent: ${change.type}\ndata: ${JSON.stringify(change)}\n\n`,
    )
    this.#held.push({ seq, owner, frame })
    if (this.#held.length > HELD_CHANGES) this.#held.shift()
    for (const reader of this.#readers) {
      if (!maySeeRun(reader.onlyOwner, owner)) continue
      if (reader.queued >= reader.queueBytes) this.#closeSlow(reader)
      else this.#write(reader, frame)
    }
  }

  /** A stream of the changes after `request.after` (those held), then each new one. */
  subscribe(request: ListStreamRequest): ListSubscription {
    const { limits, holder } = request
    const refused = streamRefusal(
      this.#readers,
      holder,
      'deployment',
      limits.listStreams,
      limits.perToken,
    )
    if (refused) return refused
    const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>()
    const reader: Reader = {
      writer: writable.getWriter(),
      holder,
      onlyOwner: request.onlyOwner,
      queued: 0,
      queueBytes: limits.queueBytes,
    }
    this.#readers.add(reader)
    reader.writer.closed.catch(() => this.#drop(reader))
    this.#write(reader, PREAMBLE)
    const missed = this.#missedSince(request.after)
    for (const change of missed ?? []) {
      if (maySeeRun(reader.onlyOwner, change.owner)) this.#write(reader, change.frame)
    }
    // `ready` carries the current position, so a reader that reconnects resumes from here.
    const ready = { type: 'ready', relist: missed === undefined }
    this.#write(
      reader,
      encoder.encode(
        `id: ${this.epoch}-${this.#seq}\nevent: ready\ndata: ${JSON.stringify(ready)}\n\n`,
      ),
    )
    this.#arm()
    return { ok: true, stream: readable }
  }

  /** Open streams. */
  get size(): number {
    return this.#readers.size
  }

  /** The held changes after `after`, or undefined when they are not all held (list again). */
  #missedSince(after: ListPosition | undefined): Held[] | undefined {
    if (!after || after.epoch !== this.epoch || after.seq > this.#seq) return undefined
    const first = this.#held[0]?.seq ?? this.#seq + 1
    if (after.seq < first - 1) return undefined
    return this.#held.filter((h) => h.seq > after.seq)
  }

  #write(reader: Reader, chunk: Uint8Array): void {
    reader.queued += chunk.byteLength
    reader.writer.write(chunk).then(
      () => {
        reader.queued -= chunk.byteLength
      },
      () => this.#drop(reader),
    )
  }

  /** The last frame of a reader too far behind: it reconnects with its Last-Event-ID. */
  #closeSlow(reader: Reader): void {
    const data = {
      reason: 'slow_reader',
      message: `this stream fell more than ${reader.queueBytes} bytes behind and was closed; reconnect with Last-Event-ID to resume`,
    }
    this.#write(reader, encoder.encode(`event: stream_closed\ndata: ${JSON.stringify(data)}\n\n`))
    this.#drop(reader)
    reader.writer.close().catch(() => {})
  }

  #drop(reader: Reader): void {
    if (this.#readers.delete(reader)) this.#arm()
  }

  /** One heartbeat timer for all readers, running only while there are some. */
  #arm(): void {
    if (this.#readers.size && !this.#heartbeat) {
      this.#heartbeat = setInterval(() => {
        for (const r of this.#readers) this.#write(r, HEARTBEAT)
      }, HEARTBEAT_MS)
    } else if (!this.#readers.size && this.#heartbeat) {
      clearInterval(this.#heartbeat)
      this.#heartbeat = undefined
    }
  }
}
