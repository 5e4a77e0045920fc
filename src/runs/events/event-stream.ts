import type { EventStreamLimits } from '../../config/event-streams'
import type { EventLog, EventRow } from './event-log'

/** A comment line every 15 s keeps proxies from closing an idle stream. */
export const HEARTBEAT_MS = 15_000
/** Events read from storage per write to a subscriber. */
const BATCH = 200
/**
 * Live events are written at most this often (the first of a burst at once): a run whose
 * transitions come every few milliseconds costs each subscriber one write per interval, not one
 * per transition. Measured by `npm run bench -- fan-out` (docs/architecture.md#performance).
 */
export const FLUSH_MS = 200
/** What a refused stream's client is told to wait before trying again. */
export const STREAM_RETRY_AFTER_SECONDS = 5

const encoder = new TextEncoder()
// Reconnecting clients wait 3 s (EventSource's default is browser-specific).
const PREAMBLE = encoder.encode('retry: 3000\n\n')
const HEARTBEAT = encoder.encode(': heartbeat\n\n')

/**
 * Stored rows in the `text/event-stream` format: `id` is the event's sequence number in the run,
 * `data` the RunEvent JSON, built around the row's stored data text instead of parsing it and
 * serializing it again (the same bytes `JSON.stringify` of the parsed event gives).
 */
export function formatSseRows(rows: readonly EventRow[], runIdJson: string): string {
  let out = ''
  for (const r of rows) {
    const at = new Date(r.at).toISOString()
    out +=
      `id: ${r.seq}\nevent: ${r.type}\ndata: {"seq":${r.seq},"runId":${runIdJson},` +
      `"type":"${r.type}","at":"${at}","data":${r.data}}\n\n`
  }
  return out
}

/**
 * The stream's last frame when its reader fell too far behind: no `id` line, so a client's
 * Last-Event-ID stays the last event it got, and reconnecting resumes right after it.
 */
function slowReaderFrame(lastEventId: number, queueBytes: number): Uint8Array {
  const data = {
    reason: 'slow_reader',
    lastEventId,
    message:
      `this stream fell more than ${queueBytes} bytes behind and was closed; ` +
      `reconnect with Last-Event-ID: ${lastEventId} to resume`,
  }
  return encoder.encode(`event: stream_closed\ndata: ${JSON.stringify(data)}\n\n`)
}

/**
 * Why one more stream for `holder` is refused, or undefined: `open` already holds `total`
 * streams (the limit named `scope`), or the holder holds `perToken` of them.
 */
export function streamRefusal<S extends string>(
  open: ReadonlySet<{ holder: string }>,
  holder: string,
  scope: S,
  total: number,
  perToken: number,
): { ok: false; code: 'too_many_streams'; scope: S | 'token'; limit: number } | undefined {
  if (open.size >= total) return { ok: false, code: 'too_many_streams', scope, limit: total }
  let held = 0
  for (const s of open) if (s.holder === holder) held++
  if (held >= perToken)
    return { ok: false, code: 'too_many_streams', scope: 'token', limit: perToken }
  return undefined
}

/** Who opens a stream, and the limits that apply to it. */
export interface StreamRequest {
  after: number
  /** The principal's name (a token's name): its streams are counted together. */
  holder: string
  limits: EventStreamLimits
}

/** A stream, or why none was opened: a limit on the run or on the holder is reached. */
export type Subscription =
  | { ok: true; stream: ReadableStream<Uint8Array> }
  | { ok: false; code: 'too_many_streams'; scope: 'run' | 'token'; limit: number }

interface Subscriber {
  writer: WritableStreamDefaultWriter<Uint8Array>
  holder: string
  /** The last sequence number written to this subscriber. */
  sent: number
  /** Bytes written and not yet taken by the reader. */
  queued: number
  queueBytes: number
  /**
   * `live`: caught up, it gets the shared chunks `publish` builds; `history`: it reads its own
   * history from storage; `ahead`: it asked to resume after an event not stored yet.
   */
  mode: 'history' | 'ahead' | 'live'
}

/**
 * The live subscribers of one run's events, held by its Durable Object. A new subscriber first
 * reads the stored history after its resume point on its own, one batch at a time as its reader
 * takes them; once caught up it is live: each newly stored event is then read from storage once
 * and serialized once, and the same bytes are written to every live subscriber. History and live
 * events join without a gap or a duplicate however many subscribers there are, because the hand
 * over happens synchronously, between two transitions.
 *
 * Bounded: at most `limits.perRun` streams on the run and `limits.perToken` per holder; a live
 * reader that has not taken `limits.queueBytes` written to it is sent a `stream_closed` frame
 * instead of more events, and closed (it resumes with Last-Event-ID): a stream holds at most
 * that plus one write. A closed or abandoned stream is forgotten at once.
 */
export class EventHub {
  readonly #subscribers = new Set<Subscriber>()
  #heartbeat: ReturnType<typeof setInterval> | undefined
  /** The last sequence number sent to live subscribers (current only while there are some). */
  #live = 0
  #liveCount = 0
  /** Subscribers in `ahead` mode: a transition looks at the others only when there are some. */
  #aheadCount = 0
  #flushTimer: ReturnType<typeof setTimeout> | undefined
  #lastFlush = 0

  constructor(
    private readonly log: EventLog,
    private readonly runId: () => string,
    /** True once the run's final event is stored: streams end after sending it. */
    private readonly finished: () => boolean,
  ) {}

  /** A stream of the events after `after`, then live ones until the run finishes. */
  subscribe(request: StreamRequest): Subscription {
    const { limits, holder } = request
    const refused = streamRefusal(this.#subscribers, holder, 'run', limits.perRun, limits.perToken)
    if (refused) return refused
    const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>()
    const sub: Subscriber = {
      writer: writable.getWriter(),
      holder,
      sent: request.after,
      queued: 0,
      queueBytes: limits.queueBytes,
      mode: 'history',
    }
    this.#subscribers.add(sub)
    sub.writer.closed.catch(() => this.#drop(sub))
    this.#write(sub, PREAMBLE)
    this.#arm()
    void this.#catchUp(sub)
    return { ok: true, stream: readable }
  }

  /** Sends newly stored events to every live subscriber; call after the transaction commits. */
  publish(): void {
    if (this.#liveCount) this.#scheduleLive()
    if (!this.#aheadCount) return
    for (const sub of this.#subscribers) {
      if (sub.mode === 'ahead') {
        sub.mode = 'history'
        this.#aheadCount--
        void this.#catchUp(sub)
      }
    }
  }

  #scheduleLive(): void {
    if (this.#flushTimer) return
    // Clamped: a clock that moved back must not hold events for longer than one interval.
    const wait = Math.min(FLUSH_MS, this.#lastFlush + FLUSH_MS - Date.now())
    if (wait <= 0) return this.#publishLive()
    this.#flushTimer = setTimeout(() => this.#publishLive(), wait)
  }

  /** Reads the events after the live point once and writes the same bytes to every live one. */
  #publishLive(): void {
    clearTimeout(this.#flushTimer)
    this.#flushTimer = undefined
    this.#lastFlush = Date.now()
    for (;;) {
      const rows = this.log.rowsAfter(this.#live, BATCH)
      if (!rows.length) break
      const chunk = encoder.encode(formatSseRows(rows, JSON.stringify(this.runId())))
      const to = rows.at(-1)!.seq
      for (const sub of this.#subscribers) {
        if (sub.mode !== 'live') continue
        // What the reader has not taken yet, not this chunk, decides: a burst bigger than the
        // bound still reaches a reader that keeps up.
        if (sub.queued >= sub.queueBytes) this.#closeSlow(sub)
        else this.#write(sub, chunk)
        sub.sent = to
      }
      this.#live = to
      if (rows.length < BATCH) break
    }
    if (this.finished())
      for (const sub of this.#subscribers) if (sub.mode === 'live') this.#end(sub)
  }

  /**
   * Writes frames that are not stored (live deltas) to every live subscriber, as they are now:
   * stored events still waiting for their write go first, so the order is kept. A reader too far
   * behind misses them (nothing is lost: the stored event has the whole reply).
   */
  sendLive(frames: string): void {
    if (!this.#liveCount) return
    if (this.#flushTimer) this.#publishLive()
    const chunk = encoder.encode(frames)
    for (const sub of this.#subscribers) {
      if (sub.mode === 'live' && sub.queued < sub.queueBytes) this.#write(sub, chunk)
    }
  }

  /** Ends every stream (the run was deleted: nothing more will come). */
  close(): void {
    clearTimeout(this.#flushTimer)
    this.#flushTimer = undefined
    for (const sub of [...this.#subscribers]) this.#end(sub)
  }

  /** Open streams on this run. */
  get size(): number {
    return this.#subscribers.size
  }

  /** Writes the history after `sub.sent`, a batch at a time as the reader takes it; then live. */
  async #catchUp(sub: Subscriber): Promise<void> {
    const runId = JSON.stringify(this.runId())
    while (this.#subscribers.has(sub)) {
      const last = this.log.lastSeq()
      if (sub.sent >= last) {
        if (this.finished()) return this.#end(sub)
        if (sub.sent > last) {
          // Resumed after an event still to come: it reads its own again when one is stored.
          sub.mode = 'ahead'
          this.#aheadCount++
          return
        }
        // Live subscribers are at the newest event once publish has run: join them there.
        if (this.#liveCount && this.#live < last) this.#publishLive()
        if (!this.#liveCount) this.#live = last
        sub.mode = 'live'
        this.#liveCount++
        return
      }
      const rows = this.log.rowsAfter(sub.sent, BATCH)
      sub.sent = rows.at(-1)!.seq
      const taken = this.#write(sub, encoder.encode(formatSseRows(rows, runId)))
      // Waiting for the reader bounds what history holds in memory to one batch per stream. The
      // last batch is not waited for: the subscriber joins the live ones at once, where what its
      // reader has not taken counts against the queue bound like any live write.
      if (sub.sent < this.log.lastSeq() && !(await taken)) return
    }
  }

  /** Queues bytes for the reader; resolves true once it took them, false if it went away. */
  #write(sub: Subscriber, chunk: Uint8Array): Promise<boolean> {
    sub.queued += chunk.byteLength
    return sub.writer.write(chunk).then(
      () => {
        sub.queued -= chunk.byteLength
        return true
      },
      () => {
        this.#drop(sub)
        return false
      },
    )
  }

  #closeSlow(sub: Subscriber): void {
    this.#write(sub, slowReaderFrame(sub.sent, sub.queueBytes))
    this.#end(sub)
  }

  /** Closes the stream after what is queued; the subscriber is forgotten at once. */
  #end(sub: Subscriber): void {
    this.#drop(sub)
    sub.writer.close().catch(() => {})
  }

  #drop(sub: Subscriber): void {
    if (!this.#subscribers.delete(sub)) return
    if (sub.mode === 'live') this.#liveCount--
    else if (sub.mode === 'ahead') this.#aheadCount--
    this.#arm()
  }

  /** One timer for all subscribers, running only while there are some. */
  #arm(): void {
    if (this.#subscribers.size && !this.#heartbeat) {
      this.#heartbeat = setInterval(() => {
        for (const sub of this.#subscribers) this.#write(sub, HEARTBEAT)
      }, HEARTBEAT_MS)
    } else if (!this.#subscribers.size && this.#heartbeat) {
      clearInterval(this.#heartbeat)
      this.#heartbeat = undefined
    }
  }
}
