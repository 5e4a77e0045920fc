import type { Context } from 'hono'
import { runStub } from '../../runs/types'
import { APPROVE_ACTION_ID, DENY_ACTION_ID, parseButtonValue } from '../../slack/approval-message'
import { userRef } from '../../slack/mrkdwn'
import { interactionType, parseBlockActions, type Parsed } from '../../slack/payloads'
import {
  ANSWER_ACTION_PREFIX,
  DECLINE_QUESTION_ACTION_ID,
  parseQuestionValue,
} from '../../slack/question-message'
import type { AppEnv } from '../app-env'
import { ApiError } from '../api-error'
import { closedReason, refusalText, slackPerson, slackRefusal } from './slack-decider'
import { publishHome } from './slack-home'
import { slackConnect } from './slack-connect'
import { CONNECT_ACTION_ID, DECLINE_CONNECT_ACTION_ID } from '../../slack/connect-message'
import { clickReply, MODAL_ACTIONS, openItemModal, slackViewSubmission } from './slack-modals'
import { RUN_ID_PATTERN } from '../../kernel/names'

/**
 * `POST /slack/interactions`: a click on a card's button (Approve, Deny, a choice, Decline, Edit,
 * Answer) or a modal submitted, decided in the run's Durable Object.
 */
export async function slackInteraction(c: Context<AppEnv>): Promise<Response> {
  if (interactionType(c.var.rawBody) === 'view_submission') return slackViewSubmission(c)
  const parsed = parseBlockActions(c.var.rawBody)
  if (!parsed.ok) throw new ApiError(400, 'invalid_slack_payload', parsed.error)
  const payload = parsed.value
  const modal = payload.actions.find((a) => MODAL_ACTIONS.includes(a.action_id))
  if (modal) return openItemModal(c, payload, modal)
  const connect = payload.actions.find((a) => CONNECT_ACTIONS.includes(a.action_id))
  if (connect) return slackConnect(c, payload, connect)
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
  const tell = clickReply(c, payload)
  if (!RUN_ID_PATTERN.test(runId))
    throw new ApiError(400, 'invalid_slack_payload', 'unknown run in button')
  const stub = runStub(c.env.RUNS, runId)
  const view = await stub.get()
  if (!view) {
    await tell(`Run ${runId} no longer exists.`)
    return c.body(null, 200)
  }
  const channel = payload.channel?.id ?? null
  const refusal = slackRefusal(c, view, {
    userId,
    teamId: payload.team?.id,
    channel,
    decision,
    callId,
  })
  if (refusal) {
    await tell(refusal)
    return c.body(null, 200)
  }
  const out = await stub.decide({
    callId,
    kind,
    decision,
    argsHash,
    by: slackPerson(userId),
    ...(answer !== undefined ? { answer } : {}),
  })
  if (!out.ok) await tell(refusalText(out, closedReason(view, callId)))
  // A second click by the same person is answered with the decision already recorded.
  else if (out.replayed)
    await tell(`Already decided: ${out.decision} by ${userRef(out.decidedBy)}.`)
  // The run's outbox replaces the buttons with chat.update once the decision is stored; the
  // Home tab, a view of the inbox, is published again.
  if (payload.container.type === 'view' && out.ok) await publishHome(c, userId, { runId, callId })
  return c.body(null, 200)
}

const CONNECT_ACTIONS = [CONNECT_ACTION_ID, DECLINE_CONNECT_ACTION_ID]

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
