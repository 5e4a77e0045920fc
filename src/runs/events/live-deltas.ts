/**
 * The reply being written, for whoever watches the run live (docs/streaming.md): pieces of model
 * text gathered and sent as `answer_delta` / `thought_delta` SSE frames at most every
 * DELTA_GAP_MS. They are never stored and carry no `id`, so replay and `Last-Event-ID` see only
 * the stored events; the stored `model_replied` has the whole reply.
 */
export const DELTA_GAP_MS = 100

export type DeltaType = 'answer_delta' | 'thought_delta'

/** One live frame: `event:` and `data:` lines and no `id:`. */
export function formatDelta(type: DeltaType, step: number, delta: string): string {
  return `event: ${type}\ndata: ${JSON.stringify({ step, delta })}\n\n`
}

export class LiveDeltas {
  /** Text waiting to be sent, in arrival order, one entry per (type, step) run of pieces. */
  #pending: { type: DeltaType; step: number; text: string }[] = []
  #timer: ReturnType<typeof setTimeout> | undefined

  constructor(
    /** Writes frames to the live subscribers (EventHub.sendLive). */
    private readonly send: (frames: string) => void,
    /** Whether anyone listens: with nobody, pieces are dropped at once. */
    private readonly listening: () => boolean,
    private readonly gapMs = DELTA_GAP_MS,
  ) {}

  push(type: DeltaType, step: number, delta: string): void {
    if (delta === '' || !this.listening()) return
    const last = this.#pending.at(-1)
    if (last && last.type === type && last.step === step) last.text += delta
    else this.#pending.push({ type, step, text: delta })
    this.#timer ??= setTimeout(() => this.flush(), this.gapMs)
  }

  /** Sends what waits now: before a stored event, so the pieces come before the whole reply. */
  flush(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer)
    this.#timer = undefined
    const pending = this.#pending
    if (!pending.length) return
    this.#pending = []
    this.send(pending.map((p) => formatDelta(p.type, p.step, p.text)).join(''))
  }
}
