import type { Context } from 'hono'
import { loadConfig } from '../../config'
import { logEvent } from '../../runs/log'
import { runStub, type DecideResponse, type RunView } from '../../runs/types'
import { APPROVE_ACTION_ID, DENY_ACTION_ID, parseButtonValue } from '../../slack/approval-message'
import { canApprove } from '../../slack/approvers'
import { userRef } from '../../slack/mrkdwn'
import { parseBlockActions } from '../../slack/payloads'
import type { AppEnv } from '../app-env'
import { ApiError } from '../api-error'
import { postEphemeralNote } from './slack-ephemeral'
import { RUN_ID_PATTERN } from '../../kernel/names'
import { findCall } from '../../kernel/calls'

/** `POST /slack/interactions`: an Approve or Deny click, decided in the run's Durable Object. */
export async function slackInteraction(c: Context<AppEnv>): Promise<Response> {
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
    postEphemeralNote(c, {
      channel: payload.channel.id,
      user: userId,
      threadTs: payload.message.thread_ts,
      text,
    })
  if (!RUN_ID_PATTERN.test(runId))
    throw new ApiError(400, 'invalid_slack_payload', 'unknown run in button')
  const stub = runStub(c.env.RUNS, runId)
  const view = await stub.get()
  if (!view) {
    await tell(`Run ${runId} no longer exists.`)
    return c.body(null, 200)
  }
  const wrongPlace = clickOutsideOrigin(view, payload.team?.id, payload.channel.id)
  if (wrongPlace) {
    logEvent(c.env, 'slack_click_outside_origin', { runId, callId, userId }, 'warn')
    await tell(`You can't decide this approval here: ${wrongPlace}`)
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
    logEvent(c.env, 'slack_unauthorised_click', { runId, callId, userId }, 'warn')
    await tell(`You can't decide this approval: ${allowed.reason}`)
    return c.body(null, 200)
  }
  const out = await stub.decide({ callId, decision, argsHash, by: userId })
  if (!out.ok) await tell(refusalText(out, closedReason(view, callId)))
  // A second click by the same person is answered with the decision already recorded.
  else if (out.replayed)
    await tell(`Already decided: ${out.decision} by ${userRef(out.decidedBy)}.`)
  // The run's outbox replaces the buttons with chat.update once the decision is stored.
  return c.body(null, 200)
}

/**
 * Buttons are only ever posted in the run's own Slack thread: a click from another workspace or
 * channel (a copied button value) is refused, as is one for a run not started from Slack.
 */
function clickOutsideOrigin(
  view: RunView,
  teamId: string | undefined,
  channel: string,
): string | undefined {
  const origin = view.slack
  if (!origin) return `run ${view.id} was not started from Slack`
  if (origin.teamId !== undefined && teamId !== origin.teamId) {
    return `run ${view.id} belongs to another Slack workspace`
  }
  if (origin.channel !== channel) return `run ${view.id} answers in another channel`
  return undefined
}

/** What a clicker is told when the run refused the decision. */
function refusalText(
  out: Extract<DecideResponse, { ok: false }>,
  closed: string | undefined,
): string {
  switch (out.code) {
    case 'approval_expired':
      return 'This approval request expired before anyone decided; nothing was changed.'
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
  const call = findCall(view.result, callId)?.call
  return call?.approval?.decidedBy === 'system' ? (call.approval.reason ?? undefined) : undefined
}
