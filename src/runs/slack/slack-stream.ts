import type { RunState } from '../../kernel/state'
import { SlackApiError } from '../../slack/slack-api-error'
import type { SlackClient } from '../../slack/web-api'
import type { DeliveryContext, LiveAnswer } from '../outbox/delivery-context'
import type { Outbox } from '../outbox/outbox'
import type { StreamSent } from '../outbox/outbox-kinds'
import type { RunInfo } from '../types'

/**
 * The answer written into the run's Slack thread as the model writes it (docs/streaming.md#slack):
 * one outbox entry, re-armed as text arrives and read from the run (and the text still being
 * written) when delivered, so appends coalesce, a 429 or an outage delays them without touching
 * the run, and what was missed is sent with the next call. One Slack call per delivery, so what
 * Slack has is always what the entry's result says.
 */
export const STREAM_ID = 'slack.stream'
/** At most one streaming call per run this often. */
export const STREAM_GAP_MS = 1_000

// Errors that mean the workspace, token or app cannot stream: fall back to posting.
const UNAVAILABLE_CODES = new Set([
  'unknown_method',
  'not_allowed_token_type',
  'missing_scope',
  'method_deprecated',
  'feature_not_enabled',
  'not_supported',
])

// Workspaces found unable to stream in this isolate, so later runs post without asking again.
const unavailableIn = new Map<string, string>()

function workspaceKey(apiUrl: string, info: RunInfo): string {
  return `${apiUrl} ${info.slack?.teamId ?? ''}`
}

type Action =
  | { kind: 'start'; step: number; text: string }
  | { kind: 'append'; text: string }
  | { kind: 'stop'; rest: string; complete: boolean }

/** The text of step `step` as far as it is known, and whether more of it can still come. */
function textOf(state: RunState, step: number, live: LiveAnswer | undefined) {
  const stored = state.steps[step]
  if (stored) {
    const isAnswer = stored.kind === 'finish'
    return { text: isAnswer ? (stored.answer ?? '') : stored.thought, finished: true, isAnswer }
  }
  const text = live?.step === step ? live.text : ''
  return { text, finished: state.phase === 'done', isAnswer: false }
}

/** What the stream owes Slack now, if anything. */
function nextAction(
  state: RunState,
  sent: StreamSent,
  live: LiveAnswer | undefined,
): Action | undefined {
  if (sent.unavailable) return undefined
  if (sent.ts && !sent.stopped && sent.step !== undefined) {
    const now = textOf(state, sent.step, live)
    const had = sent.sent ?? ''
    // A stored text that is not what was streamed (trimmed, say) is never appended to.
    const matches = now.text.startsWith(had)
    const rest = matches ? now.text.slice(had.length) : ''
    if (now.finished) return { kind: 'stop', rest, complete: matches && now.isAnswer }
    return rest ? { kind: 'append', text: rest } : undefined
  }
  // A run that ended posts its answer: a stream begun now would race that post.
  if (state.phase === 'done') return undefined
  if (!live || live.step <= (sent.step ?? -1) || !live.text.trim()) return undefined
  return { kind: 'start', step: live.step, text: live.text }
}

function sentOf(ctx: DeliveryContext): StreamSent {
  return ctx.outbox.get(STREAM_ID)?.result ?? {}
}

/** Text arrived: queue a delivery unless one is already waiting (it will read this text too). */
export function queueStreamText(outbox: Outbox, now: number): void {
  if (outbox.get(STREAM_ID)?.status === 'pending') return
  outbox.rearm(STREAM_ID, STREAM_ID, {}, now, STREAM_GAP_MS)
}

/** Inside a saved transition: a stored step or the run's end finishes the open stream message. */
export function queueStreamEnd(
  outbox: Outbox,
  prev: RunState | undefined,
  next: RunState,
  now: number,
): void {
  const entry = outbox.get(STREAM_ID)
  if (!entry) return
  const ended = next.phase === 'done'
  if (!ended && prev && prev.steps.length === next.steps.length) return
  // The run's end is not held back by the gap: its answer is owed now.
  if (ended) outbox.hasten(STREAM_ID, now)
  const sent = entry.result
  if (entry.status === 'pending' || !sent?.ts || sent.stopped) return
  outbox.rearm(STREAM_ID, STREAM_ID, {}, now, ended ? 0 : STREAM_GAP_MS)
}

/** After a delivery: queue the next one when the run or its live text has moved on. */
export function requeueStream(ctx: DeliveryContext, now: number): void {
  // The run may have moved on (even ended) while the call was in flight.
  const state = ctx.latestState?.() ?? ctx.state
  if (!nextAction(state, sentOf(ctx), ctx.liveAnswer?.())) return
  ctx.outbox.rearm(STREAM_ID, STREAM_ID, {}, now, state.phase === 'done' ? 0 : STREAM_GAP_MS)
}

/** Whether the final answer is already in the thread, streamed whole. */
export function answerStreamed(ctx: DeliveryContext): boolean {
  return sentOf(ctx).complete === true
}

/** A stream message is open (started, not stopped): the final post waits for it to end. */
export function streamOpen(ctx: DeliveryContext): boolean {
  const sent = sentOf(ctx)
  return !!sent.ts && !sent.stopped
}

/** Makes the one Slack call the stream owes now; a retryable failure is thrown for the outbox. */
export async function deliverStream(
  ctx: DeliveryContext,
  client: SlackClient,
  where: { channel: string; thread: string; apiUrl: string },
): Promise<StreamSent> {
  const sent = sentOf(ctx)
  const key = workspaceKey(where.apiUrl, ctx.info)
  const known = unavailableIn.get(key)
  if (known && !sent.ts) return { ...sent, unavailable: known }
  const action = nextAction(ctx.state, sent, ctx.liveAnswer?.())
  if (!action) return sent
  const channel = sent.channel ?? where.channel
  try {
    switch (action.kind) {
      case 'start': {
        const origin = ctx.info.slack
        const res = await client.startStream({
          channel,
          thread_ts: where.thread,
          markdown_text: action.text,
          // Slack needs the reader when the stream is in a channel rather than a DM.
          ...(origin?.teamId ? { recipient_team_id: origin.teamId } : {}),
          ...(origin?.userId ? { recipient_user_id: origin.userId } : {}),
        })
        return { step: action.step, channel: res.channel, ts: res.ts, sent: action.text }
      }
      case 'append':
        await client.appendStream({ channel, ts: sent.ts!, markdown_text: action.text })
        return { ...sent, sent: (sent.sent ?? '') + action.text }
      case 'stop':
        await client.stopStream({
          channel,
          ts: sent.ts!,
          ...(action.rest ? { markdown_text: action.rest } : {}),
        })
        return {
          ...sent,
          sent: (sent.sent ?? '') + action.rest,
          stopped: true,
          complete: action.complete,
        }
    }
  } catch (err) {
    if (!(err instanceof SlackApiError) || err.details.retryable) throw err
    const code = err.details.code
    if (action.kind === 'start') {
      if (UNAVAILABLE_CODES.has(code)) unavailableIn.set(key, code)
      return { ...sent, unavailable: code }
    }
    // A stream Slack no longer takes text for: leave it, the final answer is posted whole.
    return { ...sent, stopped: true, complete: false }
  }
}
