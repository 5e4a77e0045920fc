import type { Context } from 'hono'
import { RUN_ID_PATTERN } from '../../kernel/names'
import { logEvent } from '../../runs/log'
import { runStub, type PendingApprovalView, type RunView } from '../../runs/types'
import { parseButtonValue } from '../../slack/approval-message'
import { errorsByBlock } from '../../slack/modal-fields'
import type { BlockActions, Parsed, ViewSubmission } from '../../slack/payloads'
import { parseViewSubmission } from '../../slack/payloads'
import {
  ANSWER_CALLBACK_ID,
  ANSWER_MODAL_ACTION_ID,
  answerModal,
  EDIT_ACTION_ID,
  EDIT_CALLBACK_ID,
  editModal,
  fallbackBlock,
  linkModal,
  noticeModal,
  parseModalItem,
  readModal,
  type ModalItem,
  type ModalView,
} from '../../slack/person-modal'
import { escapeMrkdwn, mrkdwnLink } from '../../slack/mrkdwn'
import { parseQuestionValue } from '../../slack/question-message'
import type { AppEnv } from '../app-env'
import { ApiError } from '../api-error'
import { closedReason, refusalText, slackPerson, slackRefusal } from './slack-decider'
import { interactiveClient, postEphemeralNote } from './slack-ephemeral'
import { publishHome } from './slack-home'

/** The buttons that open a modal rather than decide at once. */
export const MODAL_ACTIONS = [EDIT_ACTION_ID, ANSWER_MODAL_ACTION_ID]

/**
 * How a click is answered privately: an ephemeral note under the card clicked, or, for a click in
 * a view (the Home tab, which has no channel), a small modal that says it. Both show the text as
 * mrkdwn: outside text in it (ids, messages, names) is escaped by whoever builds it
 * (`escapeMrkdwn`), and people are named with `userRef`, so a mention renders.
 */
export function clickReply(
  c: Context<AppEnv>,
  payload: BlockActions,
): (text: string) => Promise<void> {
  const channel = payload.channel?.id
  if (channel) {
    const threadTs = payload.message?.thread_ts
    return (text) => postEphemeralNote(c, { channel, user: payload.user.id, threadTs, text })
  }
  return async (text) => {
    if (payload.trigger_id) await openModal(c, payload.trigger_id, noticeModal('edgeloop', text))
  }
}

/** A link for the clicker alone, and what it is for (`text`, plain; `label` names the link). */
export interface PrivateLink {
  url: string
  label: string
  text: string
}

/**
 * How a link is handed privately to the person who clicked: in an ephemeral note under the card,
 * as a mrkdwn link; for a click in a view (the Home tab), in a modal with a button that opens it.
 */
export async function sendLinkPrivately(
  c: Context<AppEnv>,
  payload: BlockActions,
  link: PrivateLink,
): Promise<void> {
  const channel = payload.channel?.id
  if (channel) {
    const text = `${mrkdwnLink(link.url, link.label)} — ${escapeMrkdwn(link.text)}`
    const threadTs = payload.message?.thread_ts
    return postEphemeralNote(c, { channel, user: payload.user.id, threadTs, text })
  }
  if (payload.trigger_id)
    await openModal(c, payload.trigger_id, linkModal({ title: 'edgeloop', ...link }))
}

/**
 * An Edit click on an approval card, or an Answer click on a question card: checked as a decision
 * is (the run's origin, the approvers), then a modal opened with the click's `trigger_id`,
 * prefilled with the call's arguments or the question's inputs (docs/slack-app.md#modals).
 */
export async function openItemModal(
  c: Context<AppEnv>,
  payload: BlockActions,
  action: BlockActions['actions'][number],
): Promise<Response> {
  const editing = action.action_id === EDIT_ACTION_ID
  const button = buttonItem(editing, action.value ?? '')
  if (!button.ok) throw new ApiError(400, 'invalid_slack_payload', button.error)
  const { runId, callId, hash } = button.value
  if (!RUN_ID_PATTERN.test(runId))
    throw new ApiError(400, 'invalid_slack_payload', 'unknown run in button')
  if (!payload.trigger_id)
    throw new ApiError(400, 'invalid_slack_payload', 'a modal button without a trigger_id')
  const tell = clickReply(c, payload)
  const view = await runStub(c.env.RUNS, runId).get()
  if (!view) {
    await tell(`Run ${runId} no longer exists.`)
    return c.body(null, 200)
  }
  const userId = payload.user.id
  const channel = payload.channel?.id ?? null
  const who = { userId, teamId: payload.team?.id, channel, decision: 'approve', callId } as const
  const refusal = slackRefusal(c, view, who)
  if (refusal) {
    await tell(refusal)
    return c.body(null, 200)
  }
  const pending = view.pendingApprovals.find((p) => p.callId === callId)
  if (!pending || pending.argsHash !== hash) {
    await tell('This item is no longer pending as shown; nothing was changed.')
    return c.body(null, 200)
  }
  const item = { runId, callId, hash, channel }
  const modal = editing ? editModalOf(item, pending) : answerModalOf(item, pending)
  if (!modal.ok) await tell(`${escapeMrkdwn(modal.reason)}: use the console or the API.`)
  else await openModal(c, payload.trigger_id, modal.view)
  return c.body(null, 200)
}

function buttonItem(
  editing: boolean,
  value: string,
): Parsed<{ runId: string; callId: string; hash: string }> {
  if (!editing) return parseQuestionValue(value)
  const button = parseButtonValue(value)
  return button.ok ? { ok: true, value: { ...button.value, hash: button.value.argsHash } } : button
}

function editModalOf(item: Omit<ModalItem, 'fields'>, pending: PendingApprovalView): ModalView {
  if (pending.kind !== 'approval' || !pending.editSchema)
    return { ok: false, reason: `${pending.tool}'s arguments cannot be edited` }
  return editModal({
    item,
    tool: pending.tool,
    args: pending.args as Record<string, unknown>,
    schema: pending.editSchema as Record<string, unknown>,
  })
}

function answerModalOf(item: Omit<ModalItem, 'fields'>, pending: PendingApprovalView): ModalView {
  if (pending.kind !== 'question') return { ok: false, reason: 'this item is not a question' }
  const schema = (pending.ask?.schema ?? null) as Record<string, unknown> | null
  return answerModal({ item, question: pending.ask?.message ?? '', schema })
}

async function openModal(
  c: Context<AppEnv>,
  triggerId: string,
  view: Record<string, unknown>,
): Promise<void> {
  const client = interactiveClient(c)
  if (!client) return
  try {
    await client.openView({ trigger_id: triggerId, view })
  } catch (err) {
    const error = (err as Error).message
    logEvent(c.env, 'slack_modal_failed', { error }, 'warn')
  }
}

/**
 * A modal of ours submitted (`view_submission`): the edited arguments or the answer read back,
 * checked as a click is, and decided through the run's `decide`, the API's path. What does not
 * fit is shown in the modal under its field (`response_action: "errors"`) and nothing is decided;
 * an item decided meanwhile replaces the form with what happened.
 */
export async function slackViewSubmission(c: Context<AppEnv>): Promise<Response> {
  const parsed = parseViewSubmission(c.var.rawBody)
  if (!parsed.ok) throw new ApiError(400, 'invalid_slack_payload', parsed.error)
  const submitted = parsed.value
  const editing = submitted.view.callback_id === EDIT_CALLBACK_ID
  // Another app's modal, or one of ours that decides nothing: Slack only wants it closed.
  if (!editing && submitted.view.callback_id !== ANSWER_CALLBACK_ID) return c.body(null, 200)
  const decoded = parseModalItem(submitted.view.private_metadata)
  if (!decoded.ok) throw new ApiError(400, 'invalid_slack_payload', decoded.error)
  const item = decoded.value
  if (!RUN_ID_PATTERN.test(item.runId))
    throw new ApiError(400, 'invalid_slack_payload', 'unknown run in modal')
  const stub = runStub(c.env.RUNS, item.runId)
  const view = await stub.get()
  if (!view) return notice(c, `Run ${item.runId} no longer exists; nothing was changed.`)
  const userId = submitted.user.id
  const who = {
    userId,
    teamId: teamOf(submitted),
    channel: item.channel,
    decision: 'approve',
    callId: item.callId,
  } as const
  const refusal = slackRefusal(c, view, who)
  if (refusal) return notice(c, refusal)
  const textAnswer = !editing && !questionSchema(view, item.callId)
  const read = readModal(item, submitted.view.state.values as never, textAnswer)
  if (!read.ok) return c.json({ response_action: 'errors', errors: read.errors })
  if (editing && !isObject(read.value)) {
    const errors = { [fallbackBlock(item, false)]: 'must be a JSON object of arguments' }
    return c.json({ response_action: 'errors', errors })
  }
  const out = await stub.decide({
    callId: item.callId,
    kind: editing ? 'approval' : 'question',
    decision: 'approve',
    argsHash: item.hash,
    by: slackPerson(userId),
    ...(editing ? { args: read.value as Record<string, unknown> } : { answer: read.value }),
  })
  if (out.ok) {
    // Opened from the Home tab (no card's channel): the tab shows the inbox as it now is.
    if (item.channel === null) await publishHome(c, userId, item)
    return c.body(null, 200)
  }
  if (out.code === 'invalid_args' || out.code === 'invalid_answer' || out.code === 'not_editable') {
    const problems = out.problems?.length ? out.problems : [out.message]
    const errors = errorsByBlock(problems, item.fields, fallbackBlock(item, textAnswer))
    return c.json({ response_action: 'errors', errors })
  }
  return notice(c, refusalText(out, closedReason(view, item.callId)))
}

function notice(c: Context<AppEnv>, text: string): Response {
  return c.json({ response_action: 'update', view: noticeModal('Nothing changed', text) })
}

function teamOf(submitted: ViewSubmission): string | undefined {
  return submitted.team?.id ?? submitted.user.team_id
}

function questionSchema(view: RunView, callId: string): unknown {
  return view.pendingApprovals.find((p) => p.callId === callId)?.ask?.schema ?? null
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}
