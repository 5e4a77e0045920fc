import { Hono } from 'hono/tiny'
import type { Context } from 'hono'
import { logEvent } from '../../runs/log'
import { parseEventBody, parseSlashCommand } from '../../slack/payloads'
import { verifySlackRequest } from '../../slack/verify'
import { declareRoute, DeclaredRoutes } from '../openapi/serve-route'
import { errorResponses, ROUTE_ERRORS } from '../openapi/openapi-errors'
import type { AppEnv } from '../app-env'
import { ApiError } from '../api-error'
import { readRawBody } from '../body'
import { slackInteraction } from './slack-interactions'
import { answerSlackAsk, slackAgent, startRun, StartError } from '../../runs/start'
import { postEphemeralNote } from './slack-ephemeral'
import { publishHome } from './slack-home'
import { loadConfig } from '../../config'

/**
 * `/slack/*` (docs/architecture.md#slack): every request is verified before anything is parsed or recorded, and
 * acknowledged well inside Slack's 3 seconds; runs advance in their Durable Objects.
 */
export const slackRoutes = new Hono<AppEnv>()

/** What /openapi.json says of each route here. */
export const slackDocs = new DeclaredRoutes('/slack')

/** A Slack endpoint: signed by Slack, not by the API token; a 200 acknowledges it. */
function slackRoute<P extends string>(path: P, operationId: string, summary: string) {
  return declareRoute({
    method: 'post',
    path,
    operationId,
    summary,
    description: 'Verified with Slack request signing (X-Slack-Signature), not the API token.',
    tags: ['slack'],
    security: [{ slackSignature: [] }],
    responses: { '200': { description: 'Acknowledged' }, ...errorResponses(ROUTE_ERRORS.slack) },
  })
}

slackRoutes.use('*', async (c, next) => {
  // Every Slack route is a POST: another method is a 405 with Allow (the app's not-found
  // handler reads the route table), not a signature failure that would send Slack debugging
  // the wrong thing.
  if (c.req.method !== 'POST') return next()
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

const commandRoute = slackRoute('/commands', 'slackCommand', 'Slack slash command')

slackDocs.serve(slackRoutes, commandRoute, async (c) => {
  const parsed = parseSlashCommand(c.var.rawBody)
  if (!parsed.ok) throw new ApiError(400, 'invalid_slack_payload', parsed.error)
  const cmd = parsed.value
  const task = cmd.text.trim()
  if (!task)
    return ephemeral(
      c,
      `Usage: ${cmd.command} <task> or ${cmd.command} <agent>: <task>, e.g. ${cmd.command} why is the order service failing?`,
    )
  try {
    const asked = slackAgent(loadConfig(c.env), task, { channel: cmd.channel_id })
    const { view } = await startRun(c.env, {
      task: asked.task,
      ...(asked.agent ? { agent: asked.agent } : {}),
      requestedBy: `slack:${cmd.user_id}`,
      owner: null,
      slack: { channel: cmd.channel_id, userId: cmd.user_id, teamId: cmd.team_id },
      idempotencyKey: `slack-command:${cmd.team_id}:${cmd.trigger_id}`,
    })
    return ephemeral(c, `Started run \`${view.id}\`. I'll answer in a thread in this channel.`)
  } catch (err) {
    if (refused(err)) return ephemeral(c, `Could not start the run: ${err.message}`)
    throw err
  }
})

const eventRoute = slackRoute('/events', 'slackEvent', 'Slack Events API')

slackDocs.serve(slackRoutes, eventRoute, async (c) => {
  const parsed = parseEventBody(c.var.rawBody)
  if (!parsed.ok) throw new ApiError(400, 'invalid_slack_payload', parsed.error)
  const body = parsed.value
  if (body.kind === 'url_verification') return c.json({ challenge: body.challenge })
  if (body.kind === 'ignored') {
    return c.json({ ok: true, runId: null, created: false, ignored: body.reason })
  }
  if (body.kind === 'app_home_opened') {
    await publishHome(c, body.user)
    return c.json({ ok: true, runId: null, created: false, home: body.user })
  }
  const { event } = body
  const thread = event.thread_ts && event.thread_ts !== event.ts ? event.thread_ts : undefined
  // Slack retries (X-Slack-Retry-Num) carry the same event_id: the same run id, never a second run.
  const ask = {
    eventId: body.eventId,
    ...(body.teamId ? { teamId: body.teamId } : {}),
    user: event.user,
    text: event.text,
    channel: event.channel,
    ts: event.ts,
    ...(thread ? { thread } : {}),
    im: body.kind === 'message' && event.channel_type === 'im',
    mention: body.kind === 'app_mention',
  }
  const tell = (text: string) =>
    postEphemeralNote(c, { channel: ask.channel, user: ask.user, threadTs: ask.thread, text })
  const outcome = await answerSlackAsk(c.env, ask, tell).catch((err: unknown) => {
    // A bad request from Slack's side must still be acknowledged, or Slack retries it.
    if (refused(err)) {
      logEvent(c.env, 'slack_event_rejected', { eventId: body.eventId, code: err.code }, 'warn')
      return { ignored: `rejected: ${err.code}` }
    }
    throw err
  })
  const retry = c.req.header('X-Slack-Retry-Num') ?? null
  if ('runId' in outcome) {
    const { runId, created, continues } = outcome
    return c.json({ ok: true, runId, created, continues, retry })
  }
  return c.json({ ok: true, runId: null, created: false, ...outcome, retry })
})

const interactionRoute = slackRoute('/interactions', 'slackInteraction', 'Slack interactivity')

slackDocs.serve(slackRoutes, interactionRoute, slackInteraction)

/** A request Slack sent that is refused (a 4xx), not a failure of ours. */
function refused(err: unknown): err is ApiError | StartError {
  return (err instanceof ApiError && err.status < 500) || err instanceof StartError
}

function ephemeral(c: Context<AppEnv>, text: string) {
  return c.json({ response_type: 'ephemeral', text })
}
