import type { Context } from 'hono'
import { loadConfig } from '../../config'
import { RUN_ID_PATTERN } from '../../kernel/names'
import { ConnectRefused, createConnectLink } from '../../runs/connections/connections'
import { logEvent } from '../../runs/log'
import { runStub } from '../../runs/types'
import { canApprove } from '../../slack/approvers'
import { escapeMrkdwn, userRef } from '../../slack/mrkdwn'
import { CONNECT_ACTION_ID } from '../../slack/connect-message'
import type { BlockActions } from '../../slack/payloads'
import { parseQuestionValue } from '../../slack/question-message'
import type { AppEnv } from '../app-env'
import { ApiError } from '../api-error'
import { closedReason, originRefusal, refusalText, slackPerson } from './slack-decider'
import { clickReply, sendLinkPrivately } from './slack-modals'

/**
 * Connect or Decline on a `connect` card (docs/slack-app.md#connections). Whose connection it is
 * decides who may: a per-person server's, only that person (`slack:<user>`); the deployment's, an
 * approver (`SLACK_APPROVERS`). Connect makes a single-use link for the clicker, this run and this
 * item, and tells it to them alone; the grant at the callback resolves the item. Decline closes
 * the item, and the call's observation says so.
 */
export async function slackConnect(
  c: Context<AppEnv>,
  payload: BlockActions,
  action: BlockActions['actions'][number],
): Promise<Response> {
  const button = parseQuestionValue(action.value ?? '')
  if (!button.ok) throw new ApiError(400, 'invalid_slack_payload', button.error)
  const { runId, callId, hash } = button.value
  if (!RUN_ID_PATTERN.test(runId))
    throw new ApiError(400, 'invalid_slack_payload', 'unknown run in button')
  const tell = clickReply(c, payload)
  const stub = runStub(c.env.RUNS, runId)
  const view = await stub.get()
  if (!view) {
    await tell(`Run ${runId} no longer exists.`)
    return c.body(null, 200)
  }
  const userId = payload.user.id
  const connecting = action.action_id === CONNECT_ACTION_ID
  const channel = payload.channel?.id ?? null
  const who = { userId, teamId: payload.team?.id, channel, decision: 'deny', callId } as const
  const wrongPlace = originRefusal(c, view, who)
  if (wrongPlace) {
    await tell(wrongPlace)
    return c.body(null, 200)
  }
  const item = view.pendingApprovals.find((p) => p.callId === callId && p.kind === 'connect')
  if (!item || item.argsHash !== hash) {
    await tell('This connection is no longer waiting; nothing was changed.')
    return c.body(null, 200)
  }
  const details = item.ask?.details ?? {}
  const owner = typeof details.owner === 'string' ? details.owner : 'deployment'
  const person = slackPerson(userId)
  const notYours = grantRefusal(c, owner, userId)
  if (notYours) {
    logEvent(c.env, 'slack_unauthorised_click', { runId, callId, userId }, 'warn')
    await tell(notYours)
    return c.body(null, 200)
  }
  if (!connecting) {
    const out = await stub.decide({
      callId,
      kind: 'connect',
      decision: 'deny',
      argsHash: hash,
      by: slackPerson(userId),
    })
    if (!out.ok) await tell(refusalText(out, closedReason(view, callId)))
    return c.body(null, 200)
  }
  const server = loadConfig(c.env).mcpServers.find((s) => s.name === details.server)
  if (!server) {
    await tell(
      `This run needs a connection to ${escapeMrkdwn(String(details.server))}, which is not in MCP_SERVERS.`,
    )
    return c.body(null, 200)
  }
  try {
    const link = await createConnectLink(c.env, {
      server,
      person,
      runId,
      itemId: callId,
      scopes: typeof details.scopes === 'string' ? details.scopes : null,
    })
    const until = new Date(link.expiresAt).toISOString().replace(/\.\d{3}Z$/, 'Z')
    await sendLinkPrivately(c, payload, {
      url: link.url,
      label: `Connect ${server.name}`,
      text: `A link for you alone, usable once, until ${until}. The run resumes once you grant it.`,
    })
  } catch (err) {
    if (!(err instanceof ConnectRefused)) throw err
    await tell(`Could not make a connect link: ${escapeMrkdwn(err.message)}`)
  }
  return c.body(null, 200)
}

/** Why `userId` may not grant (or decline) the connection `owner` holds, or null. */
function grantRefusal(c: Context<AppEnv>, owner: string, userId: string): string | null {
  if (owner !== 'deployment') {
    return owner === slackPerson(userId)
      ? null
      : `This connection is ${userRef(owner)}'s to grant, not yours.`
  }
  const { approvers } = loadConfig(c.env).slack
  const allowed = canApprove({ approvers, userId, forbidSelfApproval: false })
  return allowed.ok
    ? null
    : `The deployment's connection is granted by an approver: ${allowed.reason}`
}
