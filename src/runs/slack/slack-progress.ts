import type { RunState } from '../../kernel/state'
import { trippedGuardrail } from '../../kernel/trace'
import { progressText, statusLine, type RunProgress } from '../../slack/progress-message'
import type { SlackClient } from '../../slack/web-api'
import type { DeliveryContext } from '../outbox/delivery-context'
import type { Outbox, OutboxEntry } from '../outbox/outbox'
import type { OutboxResult, ProgressSent } from '../outbox/outbox-kinds'
import type { RunInfo } from '../types'

/**
 * Live progress in Slack (docs/architecture.md#slack): the run's first thread message is replaced
 * with what the run is doing. One outbox entry carries it, re-armed on every change and read
 * from the run as it is when delivered, so updates coalesce (never one per step), a Slack outage
 * delays them without blocking the run, and the last state wins once Slack is back.
 */
export const PROGRESS_ID = 'slack.progress'
/** At most one `chat.update` per run this often (Slack allows ~50 a minute per method). */
export const PROGRESS_GAP_MS = 1_000

/** What the run is doing now, as its thread shows it, with the guardrails that rewrote. */
export function progressOf(state: RunState): RunProgress {
  const doing = doingOf(state)
  const rewrote = [
    ...new Set(
      state.guardrails
        .filter((g) => g.verdict === 'rewrite')
        .map((g) => `${g.guardrail} (${g.point})`),
    ),
  ]
  return rewrote.length ? { ...doing, rewrote } : doing
}

function doingOf(state: RunState): RunProgress {
  if (state.phase === 'done') {
    const u = state.usage
    const tripped = trippedGuardrail(state)
    return {
      doing: 'done',
      ok: state.result?.ok ?? false,
      stopReason: state.result?.stopReason ?? 'unknown',
      steps: state.steps.length,
      tokens: u.promptTokens + u.completionTokens,
      ...(u.costUsd !== null ? { costUsd: u.costUsd } : {}),
      ...(tripped ? { guardrail: tripped } : {}),
    }
  }
  const last = state.steps.at(-1)
  if (state.phase === 'think' || !last) return { doing: 'thinking', step: state.steps.length + 1 }
  const shown = (calls: typeof last.calls) => calls.map((c) => ({ tool: c.name, args: c.args }))
  if (state.phase === 'await_approval') {
    const waiting = last.calls.filter((c) => c.status === 'awaiting_approval')
    return { doing: 'waiting_for_approval', step: last.i + 1, calls: shown(waiting) }
  }
  // Act: the calls still to run or running (all of them while they are being reviewed).
  const open = last.calls.filter((c) => c.status !== 'done' && c.status !== 'denied')
  return { doing: 'calling', step: last.i + 1, calls: shown(open.length ? open : last.calls) }
}

/**
 * Inside the transaction that saves `next`: queue an update when the status line changed. A
 * delivered update is due again no sooner than PROGRESS_GAP_MS after it was sent; a pending one
 * keeps its time (and its backoff, while Slack fails).
 */
export function queueProgress(
  outbox: Outbox,
  prev: RunState | undefined,
  next: RunState,
  info: RunInfo,
  now: number,
): void {
  if (!info.slack) return
  // The first message itself says the run started; updates begin with its first change.
  if (!prev || statusLine(progressOf(prev)) === statusLine(progressOf(next))) return
  outbox.rearm(PROGRESS_ID, PROGRESS_ID, {}, now, PROGRESS_GAP_MS)
}

/**
 * After an update was delivered: a change saved while it was in flight found the entry pending
 * and queued nothing, so queue it now if what was sent is not what the run shows.
 */
export function requeueStaleProgress(outbox: Outbox, state: RunState, now: number): void {
  const sent = sentProgress(outbox.get(PROGRESS_ID)?.result)?.text
  if (sent === undefined || sent === currentText(state)) return
  outbox.rearm(PROGRESS_ID, PROGRESS_ID, {}, now, PROGRESS_GAP_MS)
}

/** What the progress message shows, as its last delivery recorded (none when it skipped). */
function sentProgress(
  result: OutboxResult<'slack.progress'> | undefined,
): ProgressSent | undefined {
  return result && 'text' in result ? result : undefined
}

function currentText(state: RunState): string {
  return progressText({ runId: state.id, task: state.task, progress: progressOf(state) })
}

/** Replaces the thread message (`posted`, the `slack.started` result) with the current status. */
export async function updateProgress(
  ctx: DeliveryContext,
  client: SlackClient,
  posted: { ts: string; channel: string },
): Promise<ProgressSent> {
  const text = currentText(ctx.state)
  const last = sentProgress(ctx.outbox.get(PROGRESS_ID)?.result)
  if (last?.text === text) return last
  await client.update({ channel: posted.channel, ts: posted.ts, text })
  return { ts: posted.ts, text }
}

/** The coalesced entries a pump sends. */
type PumpedKind = 'slack.progress' | 'slack.stream' | 'slack.status'

/**
 * Sends progress while a slice runs: a slice may last minutes, and the outbox is otherwise
 * delivered only between slices. After each saved transition, `poke` sends the queued update
 * when it is due, or arms a timer for when it is; one send at a time, never blocking the run.
 */
export class ProgressPump {
  #active = false
  #inFlight: Promise<void> | undefined
  #timer: ReturnType<typeof setTimeout> | undefined

  constructor(
    private readonly outbox: Outbox,
    private readonly send: (entry: OutboxEntry) => Promise<void>,
    /** The coalesced entry this pump sends (the answer stream and thread status use one too). */
    private readonly id: PumpedKind = PROGRESS_ID,
  ) {}

  /** A slice begins: pokes may send (only for a run that reports to Slack). */
  start(enabled: boolean): void {
    this.#active = enabled
  }

  poke(): void {
    if (!this.#active || this.#inFlight) return
    const entry = this.outbox.get(this.id)
    if (!entry || entry.status !== 'pending') return
    const wait = entry.nextAt - Date.now()
    if (wait > 0) {
      this.#timer ??= setTimeout(() => {
        this.#timer = undefined
        this.poke()
      }, wait)
      return
    }
    this.#clearTimer()
    this.#inFlight = this.send(entry).finally(() => {
      this.#inFlight = undefined
      // A change saved while this one was in flight is due a gap after it.
      this.poke()
    })
  }

  /** The slice ended: drop the timer and let a send in flight finish; the alarm does the rest. */
  async stop(): Promise<void> {
    this.#active = false
    this.#clearTimer()
    await this.#inFlight
  }

  #clearTimer(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer)
    this.#timer = undefined
  }
}
