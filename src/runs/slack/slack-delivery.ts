import { loadConfig } from '../../config/index'
import { DeliveryError } from '../../errors/delivery-error'
import {
  approvalBlocks,
  decisionBlocks,
  runFinishedText,
  runStartedText,
} from '../../slack/approval-message'
import { escapeMrkdwn, truncateText } from '../../slack/mrkdwn'
import { SlackClient } from '../../slack/web-api'
import type { DeliveryContext } from '../outbox/delivery-context'
import type { OutboxEntry } from '../outbox/outbox'
import { findCall } from '../../kernel/calls'
import { updateProgress } from './slack-progress'
import { deliverStatus } from './slack-status'
import { answerStreamed, deliverStream, streamOpen } from './slack-stream'
import { SLACK_THREAD_ID, slackThreadStub } from './slack-thread'

/** How long one Slack Web API call may take before it counts as a failed, retryable attempt. */
export const SLACK_CALL_TIMEOUT_MS = 10_000
// A failed run's message quotes its error; keep the message short.
const ERROR_LIMIT = 500

/**
 * Delivers the Slack messages a run owes its thread (docs/architecture.md#slack): started, approval requests,
 * decisions (buttons replaced with `chat.update`), live progress in the first message, and the
 * final answer or explicit failure.
 * Called from the run's outbox, so a Slack outage delays messages but never the run.
 */
export async function deliverSlack(entry: OutboxEntry, ctx: DeliveryContext): Promise<unknown> {
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
  const thread = threadOf(ctx)
  if (entry.kind === 'slack.stream') {
    if (!settings.stream) return { unavailable: 'SLACK_STREAM=off' }
    waitForThread(ctx, thread)
    if (!thread) return { skipped: 'no thread to stream into' }
    return deliverStream(ctx, client, { channel: origin.channel, thread, apiUrl: settings.apiUrl })
  }
  if (entry.kind === 'slack.status') {
    if (!settings.assistant) return { skipped: 'SLACK_ASSISTANT is not set' }
    waitForThread(ctx, thread)
    if (!thread) return { skipped: 'no thread for a status' }
    return deliverStatus(ctx, client, { channel: origin.channel, thread })
  }
  return send(entry, ctx, client, origin.channel, thread)
}

async function send(
  entry: OutboxEntry,
  ctx: DeliveryContext,
  client: SlackClient,
  channel: string,
  thread: string | undefined,
): Promise<unknown> {
  const { state } = ctx
  const threadArg = thread ? { thread_ts: thread } : {}
  switch (entry.kind) {
    case 'slack.started': {
      const res = await client.postMessage({
        channel,
        text: runStartedText({ runId: state.id, task: state.task }),
        ...threadArg,
      })
      return { ts: res.ts, channel: res.channel }
    }
    case 'slack.approval': {
      const callId = (entry.payload as { callId: string }).callId
      const found = callWithThought(ctx, callId)
      if (!found?.call.approval)
        throw new DeliveryError(`no approval for call ${callId}`, { retryable: false })
      // Decided before the message went out (e.g. through the API): nothing to click.
      if (found.call.status !== 'awaiting_approval') return { skipped: 'already decided' }
      waitForThread(ctx, thread)
      const asker = (ctx.info.slack ?? ctx.info.slackCards)?.userId
      const message = approvalBlocks({
        runId: state.id,
        callId,
        tool: found.call.name,
        args: found.call.args,
        reason: found.thought,
        argsHash: found.call.approval.hash,
        expiresAt: found.call.approval.expiresAt,
        ...(asker ? { requestedBy: asker } : {}),
        ...(state.agent.name !== 'default' || ctx.info.slackCards
          ? { agent: state.agent.name }
          : {}),
        ...(ctx.info.slackCards
          ? { delegatedBy: { agent: ctx.info.slackCards.parentAgent, runId: state.parent!.runId } }
          : {}),
      })
      const res = await client.postMessage({
        channel,
        text: message.text,
        blocks: message.blocks,
        ...threadArg,
      })
      return { ts: res.ts, channel: res.channel }
    }
    case 'slack.decision': {
      const callId = (entry.payload as { callId: string }).callId
      const posted = ctx.outbox.get(`slack.approval:${callId}`)
      if (!posted || posted.status === 'failed')
        return { skipped: 'approval message was never posted' }
      if (posted.status === 'pending') waitFor(ctx, posted, 'the approval message')
      const ts = (posted.result as { ts?: string } | undefined)?.ts
      if (!ts) return { skipped: 'approval message was not posted (decided first)' }
      const found = callWithThought(ctx, callId)
      const approval = found?.call.approval
      if (!found || !approval?.decision)
        throw new DeliveryError(`call ${callId} is not decided`, { retryable: false })
      const expired = approval.reason === 'expired'
      const message = decisionBlocks({
        tool: found.call.name,
        args: found.call.args,
        outcome: expired ? 'expired' : approval.decision,
        at: approval.decidedAt ?? ctx.now,
        ...(!expired && approval.decidedBy ? { by: approval.decidedBy } : {}),
        ...(!expired && approval.reason ? { reason: approval.reason } : {}),
      })
      await client.update({
        channel: (posted.result as { channel?: string }).channel ?? channel,
        ts,
        ...message,
      })
      return { ts }
    }
    case 'slack.final': {
      waitForThread(ctx, thread)
      const stream = ctx.outbox.get('slack.stream')
      if (stream?.status === 'pending' && streamOpen(ctx))
        waitFor(ctx, stream, 'the streamed answer')
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
      const res = await client.postMessage({ channel, text: text + why, ...threadArg })
      return { ts: res.ts }
    }
    case SLACK_THREAD_ID: {
      // The thread is the "Working on it" message's; until it is posted there is none to name.
      const started = ctx.outbox.get('slack.started')
      if (!started || started.status === 'failed') return { skipped: 'no thread was started' }
      if (started.status === 'pending') waitFor(ctx, started, 'the thread message')
      const ts = (started.result as { ts?: string } | undefined)?.ts
      if (!ts || !ctx.slackThreads) return { skipped: 'no thread to record' }
      const origin = ctx.info.slack!
      const place = { ...(origin.teamId ? { teamId: origin.teamId } : {}), channel, thread: ts }
      return slackThreadStub(ctx.slackThreads, place).claim(state.id, state.createdAt)
    }
    case 'slack.progress': {
      const started = ctx.outbox.get('slack.started')
      if (!started || started.status === 'failed')
        return { skipped: 'the thread message was never posted' }
      if (started.status === 'pending') waitFor(ctx, started, 'the thread message')
      const posted = started.result as { ts?: string; channel?: string } | undefined
      if (!posted?.ts) return { skipped: 'the thread message has no ts' }
      return updateProgress(ctx, client, { ts: posted.ts, channel: posted.channel ?? channel })
    }
    default:
      throw new DeliveryError(`unknown Slack delivery "${entry.kind}"`, { retryable: false })
  }
}

/** The thread to answer in: the mention's own, or the "working on it" message we posted. */
function threadOf(ctx: DeliveryContext): string | undefined {
  if (ctx.info.slack?.threadTs) return ctx.info.slack.threadTs
  if (ctx.info.slackCards) return ctx.info.slackCards.threadTs
  const started = ctx.outbox.get('slack.started')
  return (started?.result as { ts?: string } | undefined)?.ts
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
