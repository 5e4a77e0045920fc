import type { Context } from 'hono'
import { loadConfig } from '../../config'
import { logEvent } from '../../runs/log'
import { runStub, type DecideResponse, type RunView } from '../../runs/types'
import { APPROVE_ACTION_ID, DENY_ACTION_ID, parseButtonValue } from '../../slack/approval-message'
import { canApprove } from '../../slack/approvers'
import { userRef } from '../../slack/mrkdwn'
import { parseBlockActions, type Parsed } from '../../slack/payloads'
import {
  ANSWER_ACTION_PREFIX,
  DECLINE_QUESTION_ACTION_ID,
  parseQuestionValue,
} from '../../slack/question-message'
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
    (a) =>
      a.action_id === APPROVE_ACTION_ID ||
      a.action_id === DENY_ACTION_ID ||
      a.action_id === DECLINE_QUESTION_ACTION_ID ||
      a.action_id.startsWith(ANSWER_ACTION_PREFIX),
  )
  if (!action) return c.body(null, 200)
  const clicked = clickedItem(action.action_id, action.value ?? '')
  if (!clicked.ok) throw new ApiError(400, 'invalid_slack_payload', clicked.error)
  const { runId, callId, argsHash, decision, kind, answer } = clicked.value
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
  const out = await stub.decide({
    callId,
    kind,
    decision,
    argsHash,
    by: userId,
    ...(answer !== undefined ? { answer } : {}),
  })
  if (!out.ok) await tell(refusalText(out, closedReason(view, callId)))
  // A second click by the same person is answered with the decision already recorded.
  else if (out.replayed)
    await tell(`Already decided: ${out.decision} by ${userRef(out.decidedBy)}.`)
  // The run's outbox replaces the buttons with chat.update once the decision is stored.
  return c.body(null, 200)
}

/** What a clicked button decides: an approval's Approve / Deny, a question's choice or Decline. */
function clickedItem(
  actionId: string,
  value: string,
): Parsed<{
  runId: string
  callId: string
  argsHash: string
  decision: 'approve' | 'deny'
  kind: 'approval' | 'question'
  answer?: string
}> {
  if (actionId === APPROVE_ACTION_ID || actionId === DENY_ACTION_ID) {
    const button = parseButtonValue(value)
    if (!button.ok) return { ok: false, error: `approval button: ${button.error}` }
    const decision = actionId === APPROVE_ACTION_ID ? 'approve' : 'deny'
    return { ok: true, value: { ...button.value, decision, kind: 'approval' } }
  }
  const button = parseQuestionValue(value)
  if (!button.ok) return { ok: false, error: button.error }
  const { runId, callId, hash, answer } = button.value
  const declined = actionId === DECLINE_QUESTION_ACTION_ID
  if (!declined && answer === undefined)
    return { ok: false, error: 'an answer button without its answer' }
  return {
    ok: true,
    value: {
      runId,
      callId,
      argsHash: hash,
      decision: declined ? 'deny' : 'approve',
      kind: 'question',
      ...(declined ? {} : { answer }),
    },
  }
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
