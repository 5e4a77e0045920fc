import { Hono } from 'hono/tiny'
import type { Context } from 'hono'
import { loadConfig } from '../config'
import { logEvent } from '../runs/log'
import { runStub, type DecideResponse, type RunView } from '../runs/types'
import type { AppEnv } from '../routes/app-env'
import { ApiError } from '../routes/api-error'
import { readRawBody } from '../routes/body'
import { RUN_ID_PATTERN } from '../routes/schemas'
import { startRun } from '../routes/start-run'
import { APPROVE_ACTION_ID, DENY_ACTION_ID, parseButtonValue } from './approval-message'
import { canApprove } from './approvers'
import { userRef } from './mrkdwn'
import { parseBlockActions, parseEventBody, parseSlashCommand, stripMention } from './payloads'
import { verifySlackRequest } from './verify'
import { SlackClient } from './web-api'

/**
 * `/slack/*` (DESIGN §7): every request is verified before anything is parsed or recorded, and
 * acknowledged well inside Slack's 3 seconds; runs advance in their Durable Objects.
 */
export const slackRoutes = new Hono<AppEnv>()

// An ephemeral note is a courtesy; the click's answer must stay well inside Slack's 3 s.
const EPHEMERAL_TIMEOUT_MS = 1_500

slackRoutes.use('*', async (c, next) => {
  const secret = c.env.SLACK_SIGNING_SECRET
  if (!secret)
    throw new ApiError(
      401,
      'auth_not_configured',
      'this server has no SLACK_SIGNING_SECRET configured',
    )
  const raw = await readRawBody(c.req.raw)
  const verified = await verifySlackRequest({
    signingSecret: secret,
    timestamp: c.req.header('X-Slack-Request-Timestamp') ?? null,
    signature: c.req.header('X-Slack-Signature') ?? null,
    rawBody: raw,
    nowSeconds: Math.floor(Date.now() / 1000),
  })
  if (!verified.ok) throw new ApiError(401, 'invalid_slack_signature', verified.reason)
  c.set('rawBody', raw)
  await next()
})

slackRoutes.post('/commands', async (c) => {
  const parsed = parseSlashCommand(c.var.rawBody)
  if (!parsed.ok) throw new ApiError(400, 'invalid_slack_payload', parsed.error)
  const cmd = parsed.value
  const task = cmd.text.trim()
  if (!task)
    return ephemeral(
      c,
      `Usage: ${cmd.command} <task>, e.g. ${cmd.command} why is the order service failing?`,
    )
  try {
    const { view } = await startRun(c.env, {
      task,
      requestedBy: `slack:${cmd.user_id}`,
      slack: { channel: cmd.channel_id, userId: cmd.user_id, teamId: cmd.team_id },
      idempotencyKey: `slack-command:${cmd.team_id}:${cmd.trigger_id}`,
    })
    return ephemeral(c, `Started run \`${view.id}\`. I'll answer in a thread in this channel.`)
  } catch (err) {
    if (err instanceof ApiError && err.status < 500)
      return ephemeral(c, `Could not start the run: ${err.message}`)
    throw err
  }
})

slackRoutes.post('/events', async (c) => {
  const parsed = parseEventBody(c.var.rawBody)
  if (!parsed.ok) throw new ApiError(400, 'invalid_slack_payload', parsed.error)
  const body = parsed.value
  if (body.kind === 'url_verification') return c.json({ challenge: body.challenge })
  if (body.kind === 'ignored') return c.json({ ok: true, ignored: body.reason })
  const { event } = body
  const task = stripMention(event.text).trim()
  if (!task) return c.json({ ok: true, ignored: 'empty mention' })
  // Slack retries (X-Slack-Retry-Num) carry the same event_id: the same run id, never a second run.
  const { created, view } = await startRun(c.env, {
    task,
    requestedBy: `slack:${event.user}`,
    slack: {
      channel: event.channel,
      threadTs: event.thread_ts ?? event.ts,
      userId: event.user,
      ...(body.teamId ? { teamId: body.teamId } : {}),
    },
    idempotencyKey: `slack-event:${body.teamId ?? ''}:${body.eventId}`,
  }).catch((err) => {
    // A bad request from Slack's side must still be acknowledged, or Slack retries it.
    if (err instanceof ApiError && err.status < 500) {
      logEvent('slack_event_rejected', { eventId: body.eventId, code: err.code })
      return { created: false, view: undefined }
    }
    throw err
  })
  return c.json({
    ok: true,
    runId: view?.id ?? null,
    created,
    retry: c.req.header('X-Slack-Retry-Num') ?? null,
  })
})

slackRoutes.post('/interactions', async (c) => {
  const parsed = parseBlockActions(c.var.rawBody)
  if (!parsed.ok) throw new ApiError(400, 'invalid_slack_payload', parsed.error)
  const payload = parsed.value
  const action = payload.actions.find(
    (a) => a.action_id === APPROVE_ACTION_ID || a.action_id === DENY_ACTION_ID,
  )
  if (!action) return c.body(null, 200)
  const button = parseButtonValue(action.value ?? '')
  if (!button.ok)
    throw new ApiError(400, 'invalid_slack_payload', `approval button: ${button.error}`)
  const { runId, callId, argsHash } = button.value
  const decision = action.action_id === APPROVE_ACTION_ID ? 'approve' : 'deny'
  const userId = payload.user.id
  const tell = (text: string) =>
    notifyUser(c, payload.channel.id, userId, payload.message.thread_ts, text)
  if (!RUN_ID_PATTERN.test(runId))
    throw new ApiError(400, 'invalid_slack_payload', 'unknown run in button')
  const stub = runStub(c.env.RUNS, runId)
  const view = await stub.get()
  if (!view) {
    await tell(`Run ${runId} no longer exists.`)
    return c.body(null, 200)
  }
  const config = loadConfig(c.env).slack
  const requestedBy = view.requestedBy.startsWith('slack:') ? view.requestedBy.slice(6) : undefined
  const allowed = canApprove({
    approvers: config.approvers,
    userId,
    forbidSelfApproval: config.forbidSelfApproval,
    decision,
    ...(requestedBy ? { requestedBy } : {}),
  })
  if (!allowed.ok) {
    logEvent('slack_unauthorised_click', { runId, callId, userId })
    await tell(`You can't decide this approval: ${allowed.reason}`)
    return c.body(null, 200)
  }
  const out = await stub.decide({ callId, decision, argsHash, by: userId })
  if (!out.ok) await tell(refusalText(out, closedReason(view, callId)))
  // The run's outbox replaces the buttons with chat.update once the decision is stored.
  return c.body(null, 200)
})

/** What a clicker is told when the run refused the decision. */
function refusalText(
  out: Extract<DecideResponse, { ok: false }>,
  closed: string | undefined,
): string {
  switch (out.code) {
    case 'already_decided':
      // The system closes approvals that expire or whose run is cancelled: no person decided.
      if (out.decidedBy === 'system' || closed === 'expired' || closed === 'cancelled') {
        return closed === 'cancelled'
          ? 'The run was cancelled, so this approval was closed; nothing was changed.'
          : 'This approval request expired before anyone decided; nothing was changed.'
      }
      return `Already decided: ${out.decision} by ${userRef(out.decidedBy ?? 'someone else')}.`
    case 'hash_mismatch':
      return 'These buttons no longer match the pending call; nothing was changed.'
    default:
      return `Nothing was changed: ${out.message}`
  }
}

/** Why the system closed call `callId` (`expired`, `cancelled`), as the run last showed it. */
function closedReason(view: RunView, callId: string): string | undefined {
  for (const step of view.result.steps) {
    const call = step.calls.find((c) => c.id === callId)
    if (call) return call.approval?.decidedBy === 'system' ? call.approval.reason : undefined
  }
  return undefined
}

function ephemeral(c: Context<AppEnv>, text: string) {
  return c.json({ response_type: 'ephemeral', text })
}

/** An ephemeral note to one user; a Slack failure here is logged, never an error for Slack. */
async function notifyUser(
  c: Context<AppEnv>,
  channel: string,
  user: string,
  threadTs: string | undefined,
  text: string,
): Promise<void> {
  const token = c.env.SLACK_BOT_TOKEN
  if (!token) return
  try {
    // Slack waits for our answer to the click: never let this note hold it near the 3 s limit.
    const client = new SlackClient({
      token,
      baseUrl: loadConfig(c.env).slack.apiUrl,
      maxRetries: 0,
      fetch: (input, init) =>
        fetch(input, { ...init, signal: AbortSignal.timeout(EPHEMERAL_TIMEOUT_MS) }),
    })
    await client.postEphemeral({
      channel,
      user,
      text,
      ...(threadTs ? { thread_ts: threadTs } : {}),
    })
  } catch (err) {
    logEvent('slack_ephemeral_failed', { channel, error: (err as Error).message })
  }
}
