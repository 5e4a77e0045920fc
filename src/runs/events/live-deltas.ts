/**
 * The reply being written, for whoever watches the run live (docs/streaming.md): pieces of model
 * text gathered and sent as `answer_delta` / `thought_delta` SSE frames at most every
 * DELTA_GAP_MS. They are never stored and carry no `id`, so replay and `Last-Event-ID` see only
 * the stored events; the stored `model_replied` has the whole reply. Each frame names the model
 * call it belongs to (`step` and `attempt`): a call made again after a crash lost the first one's
 * answer has a higher attempt, and a client drops the text of the lower one.
 */
export const DELTA_GAP_MS = 100

export type DeltaType = 'answer_delta' | 'thought_delta'

/** The model call a piece of text comes from: its step, and which call for that step. */
export interface DeltaCall {
  step: number
  /** 1 for the step's first call; one more for each call whose answer was lost. */
  attempt: number
}

/** One live frame: `event:` and `data:` lines and no `id:`. */
export function formatDelta(type: DeltaType, call: DeltaCall, delta: string): string {
  return `event: ${type}\ndata: ${JSON.stringify({ step: call.step, attempt: call.attempt, delta })}\n\n`
}

export class LiveDeltas {
  /** Text waiting to be sent, in arrival order, one entry per (type, call) run of pieces. */
  #pending: { type: DeltaType; call: DeltaCall; text: string }[] = []
  #timer: ReturnType<typeof setTimeout> | undefined

  constructor(
    /** Writes frames to the live subscribers (EventHub.sendLive). */
    private readonly send: (frames: string) => void,
    /** Whether anyone listens: with nobody, pieces are dropped at once. */
    private readonly listening: () => boolean,
    private readonly gapMs = DELTA_GAP_MS,
  ) {}

  push(type: DeltaType, call: DeltaCall, delta: string): void {
    if (delta === '' || !this.listening()) return
    const last = this.#pending.at(-1)
    const same = last?.call.step === call.step && last.call.attempt === call.attempt
    if (last && last.type === type && same) last.text += delta
    else this.#pending.push({ type, call, text: delta })
    this.#timer ??= setTimeout(() => this.flush(), this.gapMs)
  }

  /** Sends what waits now: before a stored event, so the pieces come before the whole reply. */
  flush(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer)
    this.#timer = undefined
    const pending = this.#pending
    if (!pending.length) return
    this.#pending = []
    this.send(pending.map((p) => formatDelta(p.type, p.call, p.text)).join(''))
  }
}
