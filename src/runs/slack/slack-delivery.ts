import { loadConfig } from '../../config/index'
import { DeliveryError } from '../../errors/delivery-error'
import { questionBlocks, questionDecidedBlocks } from '../../slack/question-message'
import { connectBlocks, connectDecidedBlocks } from '../../slack/connect-message'
import { slackCardKey } from './slack-card-key'
import {
  approvalBlocks,
  decisionBlocks,
  runFinishedText,
  runStartedText,
} from '../../slack/approval-message'
import { escapeMrkdwn, truncateText } from '../../slack/mrkdwn'
import { SlackClient } from '../../slack/web-api'
import type { DeliveryContext, Deliverer } from '../outbox/delivery-context'
import type { OutboxEntry, OutboxEntryOf } from '../outbox/outbox'
import type { OutboxResult } from '../outbox/outbox-kinds'
import { findCall } from '../../kernel/calls'
import { updateProgress } from './slack-progress'
import { deliverStatus } from './slack-status'
import { answerStreamed, deliverStream, streamOpen } from './slack-stream'
import { slackThreadStub } from '../slack-place'

/** How long one Slack Web API call may take before it counts as a failed, retryable attempt. */
export const SLACK_CALL_TIMEOUT_MS = 10_000
// A failed run's message quotes its error; keep the message short.
const ERROR_LIMIT = 500

/** The outbox kinds a run's Slack thread is sent. */
export type SlackKind =
  | 'slack.started'
  | 'slack.approval'
  | 'slack.decision'
  | 'slack.final'
  | 'slack.thread'
  | 'slack.progress'
  | 'slack.stream'
  | 'slack.status'

/** Where a Slack delivery goes, and the client that sends it. */
interface SlackTarget {
  client: SlackClient
  settings: SlackSettings
  channel: string
  /** The run's thread, once known. */
  thread: string | undefined
}

type SlackSettings = ReturnType<typeof loadConfig>['slack']

type SlackSend<K extends SlackKind> = (
  entry: OutboxEntryOf<K>,
  ctx: DeliveryContext,
  to: SlackTarget,
) => Promise<OutboxResult<K>>

/**
 * The Slack messages a run owes its thread (docs/architecture.md#slack), one deliverer per kind:
 * started, approval requests, decisions (buttons replaced with `chat.update`), live progress in
 * the first message, the answer stream, the thread status, and the final answer or explicit
 * failure. Called from the run's outbox, so a Slack outage delays messages but never the run.
 */
export const SLACK_DELIVERERS: { [K in SlackKind]: Deliverer<K> } = {
  'slack.started': slack(started),
  'slack.approval': slack(approval),
  'slack.decision': slack(decision),
  'slack.final': slack(final),
  'slack.thread': slack(recordThread),
  'slack.progress': slack(progress),
  'slack.stream': slack(stream),
  'slack.status': slack(status),
}

/** What every Slack delivery checks and builds first: the run's origin, the token, a client. */
function slack<K extends SlackKind>(send: SlackSend<K>): Deliverer<K> {
  return async (entry, ctx) => {
    // A run with cards only (a child of a Slack-started run, to its parent's thread; a run of
    // the API, MCP or A2A, to its approvals channel) sends only its pending items' cards.
    const origin = ctx.info.slack ?? ctx.info.slackCards
    if (!origin) throw new DeliveryError('run was not started from Slack', { retryable: false })
    const token = ctx.env.SLACK_BOT_TOKEN
    if (!token) throw new DeliveryError('SLACK_BOT_TOKEN is not configured', { retryable: false })
    // No in-client retries: the outbox retries with backoff so the alarm never sleeps on Slack.
    // A bounded wait per call: deliveries run in the run's alarm, and a hung Slack must never
    // hold the run.
    const settings = loadConfig(ctx.env).slack
    const client = new SlackClient({
      token,
      baseUrl: settings.apiUrl,
      maxRetries: 0,
      timeoutMs: SLACK_CALL_TIMEOUT_MS,
    })
    // A SlackApiError is a DeliveryError: the outbox reads its `retryable` and `retryAfterMs`.
    return send(entry, ctx, { client, settings, channel: origin.channel, thread: threadOf(ctx) })
  }
}

const threadArg = (thread: string | undefined) => (thread ? { thread_ts: thread } : {})

async function stream(
  _entry: OutboxEntryOf<'slack.stream'>,
  ctx: DeliveryContext,
  { client, settings, channel, thread }: SlackTarget,
): Promise<OutboxResult<'slack.stream'>> {
  if (!settings.stream) return { unavailable: 'SLACK_STREAM=off' }
  waitForThread(ctx, thread)
  if (!thread) return { skipped: 'no thread to stream into' }
  return deliverStream(ctx, client, { channel, thread, apiUrl: settings.apiUrl })
}

async function status(
  _entry: OutboxEntryOf<'slack.status'>,
  ctx: DeliveryContext,
  { client, settings, channel, thread }: SlackTarget,
): Promise<OutboxResult<'slack.status'>> {
  if (!settings.assistant) return { skipped: 'SLACK_ASSISTANT is not set' }
  waitForThread(ctx, thread)
  if (!thread) return { skipped: 'no thread for a status' }
  return deliverStatus(ctx, client, { channel, thread })
}

async function started(
  _entry: OutboxEntryOf<'slack.started'>,
  ctx: DeliveryContext,
  { client, channel, thread }: SlackTarget,
): Promise<OutboxResult<'slack.started'>> {
  const { state } = ctx
  const res = await client.postMessage({
    channel,
    text: runStartedText({ runId: state.id, task: state.task }),
    ...threadArg(thread),
  })
  return { ts: res.ts, channel: res.channel }
}

async function approval(
  entry: OutboxEntryOf<'slack.approval'>,
  ctx: DeliveryContext,
  { client, channel, thread }: SlackTarget,
): Promise<OutboxResult<'slack.approval'>> {
  const { state } = ctx
  const callId = entry.payload.callId
  const found = callWithThought(ctx, callId)
  if (!found?.call.approval)
    throw new DeliveryError(`no approval for call ${callId}`, { retryable: false })
  // Decided before the message went out (e.g. through the API): nothing to click.
  if (found.call.status !== 'awaiting_approval') return { skipped: 'already decided' }
  waitForThread(ctx, thread)
  const cards = ctx.info.slackCards
  const asker = (ctx.info.slack ?? cards)?.userId
  const item = found.call.approval
  const message =
    item.kind === 'connect'
      ? connectBlocks({
          runId: state.id,
          callId,
          hash: item.hash,
          message: item.ask?.message ?? 'Connect an account',
          expiresAt: item.expiresAt,
        })
      : item.kind === 'question'
        ? questionBlocks({
            runId: state.id,
            callId,
            question: item.ask?.message ?? '',
            choices: item.ask?.choices ?? null,
            hash: item.hash,
            expiresAt: item.expiresAt,
          })
        : approvalBlocks({
            runId: state.id,
            callId,
            tool: found.call.name,
            args: found.call.args,
            reason: found.thought,
            argsHash: found.call.approval.hash,
            expiresAt: found.call.approval.expiresAt,
            editable: !!item.editSchema,
            ...(asker ? { requestedBy: asker } : {}),
            ...(state.agent.name !== 'default' || cards ? { agent: state.agent.name } : {}),
            ...(cards?.parentAgent && state.parent
              ? { delegatedBy: { agent: cards.parentAgent, runId: state.parent.runId } }
              : {}),
          })
  const res = await client.postMessage({
    channel,
    text: message.text,
    blocks: message.blocks,
    ...threadArg(thread),
  })
  return { ts: res.ts, channel: res.channel }
}

async function decision(
  entry: OutboxEntryOf<'slack.decision'>,
  ctx: DeliveryContext,
  { client, channel }: SlackTarget,
): Promise<OutboxResult<'slack.decision'>> {
  const callId = entry.payload.callId
  const kind = callWithThought(ctx, callId)?.call.approval?.kind ?? 'approval'
  const posted = ctx.outbox.get('slack.approval', `slack.approval:${slackCardKey(callId, kind)}`)
  if (!posted || posted.status === 'failed') return { skipped: 'approval message was never posted' }
  if (posted.status === 'pending') waitFor(ctx, posted, 'the approval message')
  const message = posted.result && !('skipped' in posted.result) ? posted.result : undefined
  const ts = message?.ts
  if (!ts) return { skipped: 'approval message was not posted (decided first)' }
  const found = callWithThought(ctx, callId)
  const approval = found?.call.approval
  if (!found || !approval?.decision)
    throw new DeliveryError(`call ${callId} is not decided`, { retryable: false })
  const expired = approval.reason === 'expired'
  const outcome = expired ? 'expired' : approval.decision === 'approved' ? 'answered' : 'declined'
  const blocks =
    approval.kind === 'connect'
      ? connectDecidedBlocks({
          message: approval.ask?.message ?? '',
          outcome: outcome === 'answered' ? 'connected' : outcome,
          at: approval.decidedAt ?? ctx.now,
          ...(!expired && approval.decidedBy ? { by: approval.decidedBy } : {}),
        })
      : approval.kind === 'question'
        ? questionDecidedBlocks({
            question: approval.ask?.message ?? '',
            outcome,
            at: approval.decidedAt ?? ctx.now,
            ...(!expired && approval.decidedBy ? { by: approval.decidedBy } : {}),
            ...(approval.decision === 'approved' ? { answer: approval.answer } : {}),
          })
        : decisionBlocks({
            tool: found.call.name,
            args: found.call.args,
            outcome: expired ? 'expired' : approval.decision,
            at: approval.decidedAt ?? ctx.now,
            ...(!expired && approval.decidedBy ? { by: approval.decidedBy } : {}),
            ...(!expired && approval.reason ? { reason: approval.reason } : {}),
          })
  await client.update({ channel: message.channel ?? channel, ts, ...blocks })
  return { ts }
}

async function final(
  _entry: OutboxEntryOf<'slack.final'>,
  ctx: DeliveryContext,
  { client, channel, thread }: SlackTarget,
): Promise<OutboxResult<'slack.final'>> {
  const { state } = ctx
  waitForThread(ctx, thread)
  const stream = ctx.outbox.get('slack.stream')
  if (stream?.status === 'pending' && streamOpen(ctx)) waitFor(ctx, stream, 'the streamed answer')
  if (state.result?.ok && answerStreamed(ctx)) return { streamed: true }
  const r = state.result
  const text = runFinishedText({
    ok: r?.ok ?? false,
    answer: r?.answer ?? '',
    stopReason: r?.stopReason ?? 'unknown',
    steps: state.steps.length,
    ...(r?.ok && state.agent.output ? { output: r.output } : {}),
  })
  // A failure says why, not only which budget or error class stopped it.
  const why =
    r && !r.ok && r.error?.trim()
      ? `\n*Why:* ${truncateText(escapeMrkdwn(r.error.trim()), ERROR_LIMIT).text}`
      : ''
  const res = await client.postMessage({ channel, text: text + why, ...threadArg(thread) })
  return { ts: res.ts }
}

async function recordThread(
  _entry: OutboxEntryOf<'slack.thread'>,
  ctx: DeliveryContext,
  { channel }: SlackTarget,
): Promise<OutboxResult<'slack.thread'>> {
  const { state } = ctx
  // The thread is the "Working on it" message's; until it is posted there is none to name.
  const started = ctx.outbox.get('slack.started')
  if (!started || started.status === 'failed') return { skipped: 'no thread was started' }
  if (started.status === 'pending') waitFor(ctx, started, 'the thread message')
  const ts = started.result?.ts
  if (!ts || !ctx.slackThreads) return { skipped: 'no thread to record' }
  const origin = ctx.info.slack!
  const place = { ...(origin.teamId ? { teamId: origin.teamId } : {}), channel, thread: ts }
  return slackThreadStub(ctx.slackThreads, place).claim(state.id, state.createdAt)
}

async function progress(
  _entry: OutboxEntryOf<'slack.progress'>,
  ctx: DeliveryContext,
  { client, channel }: SlackTarget,
): Promise<OutboxResult<'slack.progress'>> {
  const started = ctx.outbox.get('slack.started')
  if (!started || started.status === 'failed')
    return { skipped: 'the thread message was never posted' }
  if (started.status === 'pending') waitFor(ctx, started, 'the thread message')
  const posted = started.result
  if (!posted?.ts) return { skipped: 'the thread message has no ts' }
  return updateProgress(ctx, client, { ts: posted.ts, channel: posted.channel ?? channel })
}

/** The thread to answer in: the mention's own, or the "working on it" message we posted. */
function threadOf(ctx: DeliveryContext): string | undefined {
  if (ctx.info.slack?.threadTs) return ctx.info.slack.threadTs
  if (ctx.info.slackCards) return ctx.info.slackCards.threadTs
  return ctx.outbox.get('slack.started')?.result?.ts
}

/** Keeps a run's messages in its thread: wait while the first message is still being retried. */
function waitForThread(ctx: DeliveryContext, thread: string | undefined): void {
  if (thread) return
  const started = ctx.outbox.get('slack.started')
  if (started?.status === 'pending') waitFor(ctx, started, 'the thread message')
}

/**
 * Retry right after the message this one depends on is next tried, not on a fixed short delay:
 * each wait counts as an attempt, and waiting in lockstep with the other delivery's backoff
 * means a long Slack outage cannot exhaust this delivery's attempts before that one's.
 */
function waitFor(ctx: DeliveryContext, blocker: OutboxEntry, what: string): never {
  throw new DeliveryError(
    `waiting for ${what} (${blocker.id}, attempt ${blocker.attempts}: ${blocker.lastError ?? 'not sent yet'})`,
    { retryable: true, retryAfterMs: Math.max(0, blocker.nextAt - ctx.now) + 1 },
  )
}

function callWithThought(ctx: DeliveryContext, callId: string) {
  const found = findCall(ctx.state, callId)
  return found
    ? { call: found.call, thought: ctx.state.steps[found.stepIndex]!.thought }
    : undefined
}
