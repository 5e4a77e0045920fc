/** Reads a `text/event-stream` response as a client would, for the event stream tests. */
import type { RunEvent } from '../../src/runs/events/events'

/** A live delta frame (`answer_delta` / `thought_delta`): no `id`, never stored. */
export interface DeltaFrame {
  event: string
  data: { step: number; attempt: number; delta: string }
  /** How many stored events had arrived before it. */
  after: number
  /** The frame's field lines as sent, e.g. to check there is no `id:`. */
  fields: string[]
}

export interface SseReader {
  /** Events received so far, in order. */
  readonly events: RunEvent[]
  /** Live delta frames received so far, in order. */
  readonly deltas: DeltaFrame[]
  /** Comment lines received so far (heartbeats), without the leading colon. */
  readonly comments: string[]
  /** Reads until `done(events)` holds; fails after `ms` without it. */
  until(done: (events: RunEvent[]) => boolean, ms?: number): Promise<RunEvent[]>
  /** Reads until the server closes the stream; returns every event. */
  toEnd(ms?: number): Promise<RunEvent[]>
  /** True once the server closed the stream. */
  readonly closed: boolean
  cancel(): Promise<void>
}

/** Parses the stream frame by frame: `id`, `event` and `data` lines, and `:` comments. */
export function readSse(res: Response): SseReader {
  const reader = res.body!.getReader()
  const decoder = new TextDecoder()
  const events: RunEvent[] = []
  const deltas: DeltaFrame[] = []
  const comments: string[] = []
  let buffer = ''
  let closed = false

  const take = (frame: string) => {
    const fields: Record<string, string> = {}
    for (const line of frame.split('\n')) {
      if (line.startsWith(':')) comments.push(line.slice(1).trim())
      const at = line.indexOf(': ')
      if (at > 0) fields[line.slice(0, at)] = line.slice(at + 2)
    }
    if (fields.data === undefined) return
    if (fields.event === 'answer_delta' || fields.event === 'thought_delta') {
      const names = frame.split('\n').map((line) => line.slice(0, line.indexOf(':')))
      deltas.push({
        event: fields.event,
        data: JSON.parse(fields.data),
        after: events.length,
        fields: names,
      })
      return
    }
    const event = JSON.parse(fields.data) as RunEvent
    // The SSE framing and the JSON agree: id is the sequence number, event the type.
    if (String(event.seq) !== fields.id || event.type !== fields.event) {
      throw new Error(`frame fields disagree with its data: ${frame}`)
    }
    events.push(event)
  }

  const readOnce = async (deadline: number) => {
    const timer = new Promise<'timeout'>((resolve) =>
      setTimeout(() => resolve('timeout'), Math.max(0, deadline - performance.now())),
    )
    const next = await Promise.race([reader.read(), timer])
    if (next === 'timeout') return 'timeout'
    if (next.done) {
      closed = true
      return 'closed'
    }
    buffer += decoder.decode(next.value, { stream: true })
    let end: number
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      take(buffer.slice(0, end))
      buffer = buffer.slice(end + 2)
    }
    return 'data'
  }

  const self: SseReader = {
    events,
    deltas,
    comments,
    get closed() {
      return closed
    },
    async until(done, ms = 10_000) {
      const deadline = performance.now() + ms
      while (!done(events)) {
        const got = closed ? 'closed' : await readOnce(deadline)
        if (got !== 'data' && !done(events)) {
          throw new Error(
            `stream ${got} before the expected events; got ${events.map((e) => `${e.seq}:${e.type}`).join(', ')}`,
          )
        }
      }
      return events
    },
    async toEnd(ms = 10_000) {
      const deadline = performance.now() + ms
      while (!closed) {
        if ((await readOnce(deadline)) === 'timeout') {
          throw new Error(`stream still open; got ${events.map((e) => e.type).join(', ')}`)
        }
      }
      return events
    },
    cancel: () => reader.cancel(),
  }
  return self
}

/** `seq:type` of each event, for compact sequence assertions. */
export const kinds = (events: RunEvent[]) => events.map((e) => `${e.seq}:${e.type}`)
