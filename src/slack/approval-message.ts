/**
 * Block Kit for approvals (docs/architecture.md#slack): the request with Approve / Deny buttons, the message that
 * replaces it once decided, and the run's start and finish notes.
 */
import * as z from 'zod/mini'
import {
  SLACK_TEXT_LIMIT,
  escapeMrkdwn,
  jsonCodeBlock,
  slackDate,
  truncateText,
  userRef,
} from './mrkdwn'
import type { Parsed } from './payloads'
import { structuredAnswerText } from './structured-answer'
import { SHA256_HEX_PATTERN } from '../validation/patterns'
import { jsonTextDepth, MAX_JSON_DEPTH } from '../validation/json-walk'

export const APPROVE_ACTION_ID = 'edgeloop_approve'
export const DENY_ACTION_ID = 'edgeloop_deny'
/** Opens the modal that edits the arguments before approving (slack/person-modal.ts). */
export const EDIT_ACTION_ID = 'edgeloop_edit'
/** Slack's limit for a button's `value`. */
export const BUTTON_VALUE_LIMIT = 2000
// Header blocks take plain_text of at most 150 characters.
const HEADER_LIMIT = 150
// Slack accepts 40k characters of message text but folds anything long; keep answers readable.
const ANSWER_LIMIT = 3800

export interface SlackMessage {
  /** Notification and fallback text. */
  text: string
  blocks: Block[]
}

export type Block = Record<string, unknown> & { type: string }

export interface ApprovalRequest {
  runId: string
  callId: string
  tool: string
  args: Record<string, unknown>
  /** The model's thought for this step: why it wants the call. */
  reason: string
  /** Hex SHA-256 of the call (see `argsHash` in kernel/canonical). */
  argsHash: string
  /** When the approval lapses, ms since the epoch. */
  expiresAt: number
  /** Slack user who started the run, if one did. */
  requestedBy?: string
  /** The run's agent, when it is not the default one. */
  agent?: string
  /** A child run: the agent and run that delegated to it (the card names both agents). */
  delegatedBy?: { agent: string; runId: string }
  /** The tool takes edited arguments: the card offers Edit (a modal, docs/slack-app.md#modals). */
  editable?: boolean
}

export interface ButtonValue {
  runId: string
  callId: string
  argsHash: string
}

const ButtonValueSchema = z.object({
  r: z.string().check(z.minLength(1)),
  c: z.string().check(z.minLength(1)),
  h: z.string().check(z.regex(SHA256_HEX_PATTERN)),
})

/** The approval request message: tool, exact arguments, reason, expiry, Approve / Deny / Edit. */
export function approvalBlocks(input: ApprovalRequest): SlackMessage {
  const { runId, callId, tool, args, reason, argsHash, expiresAt, requestedBy, agent } = input
  const by = input.delegatedBy
  const value = buttonValue({ runId, callId, argsHash })
  const toolCode = code(tool)

  const facts = [`*Tool:* ${toolCode}`]
  if (agent) facts.push(`*Agent:* ${code(agent)}`)
  if (by) facts.push(`*Delegated by:* ${code(by.agent)} (run ${code(by.runId)})`)
  if (requestedBy) facts.push(`*Requested by:* ${userRef(requestedBy)}`)
  const argsTitle = '*Arguments:*\n'
  const note = '\n_Arguments truncated for display; the approval covers the full arguments._'
  let shown = jsonCodeBlock(args, SLACK_TEXT_LIMIT - argsTitle.length)
  if (shown.truncated)
    shown = jsonCodeBlock(args, SLACK_TEXT_LIMIT - argsTitle.length - note.length)

  const reasonTitle = '*Why the model wants it:*\n'
  const reasonText = reason.trim()
    ? truncateText(escapeMrkdwn(reason.trim()), SLACK_TEXT_LIMIT - reasonTitle.length - 1)
    : { text: '_(the model gave no reason)_', truncated: false }

  const blocks: Block[] = [
    {
      type: 'header',
      text: {
        type: 'plain_text',
        text: truncateText(`Approval needed: ${tool}`, HEADER_LIMIT).text,
      },
    },
    section(facts.join('\n')),
    section(argsTitle + shown.text + (shown.truncated ? note : '')),
    section(reasonTitle + reasonText.text + (reasonText.truncated ? '…' : '')),
    {
      type: 'context',
      elements: [
        // Ids can be long (the button allows 2000 characters); the expiry comes first so a cut
        // never lands inside the date token.
        mrkdwn(
          truncateText(
            `Expires ${slackDate(expiresAt)} · args ${code(argsHash.slice(0, 12))} · ` +
              `run ${code(runId)} · call ${code(callId)}`,
            SLACK_TEXT_LIMIT,
          ).text,
        ),
      ],
    },
    {
      type: 'actions',
      block_id: 'edgeloop_approval',
      elements: [
        button('Approve', APPROVE_ACTION_ID, 'primary', value),
        button('Deny', DENY_ACTION_ID, 'danger', value),
        ...(input.editable ? [button('Edit', EDIT_ACTION_ID, null, value)] : []),
      ],
    },
  ]
  return { text: `Approval needed: ${escapeMrkdwn(tool)} (run ${escapeMrkdwn(runId)})`, blocks }
}

/** Decode an Approve / Deny button's `value` back into the approval it names. */
export function parseButtonValue(value: string): Parsed<ButtonValue> {
  let json: unknown
  if (jsonTextDepth(value, MAX_JSON_DEPTH) > MAX_JSON_DEPTH) {
    return { ok: false, error: `approval button value nests deeper than ${MAX_JSON_DEPTH} levels` }
  }
  try {
    json = JSON.parse(value)
  } catch {
    return { ok: false, error: 'approval button value is not JSON' }
  }
  const parsed = ButtonValueSchema.safeParse(json)
  if (!parsed.success) {
    return { ok: false, error: 'approval button value lacks a run id, call id or 64-hex args hash' }
  }
  const { r, c, h } = parsed.data
  return { ok: true, value: { runId: r, callId: c, argsHash: h } }
}

export interface DecisionInput {
  tool: string
  args: Record<string, unknown>
  outcome: 'approved' | 'denied' | 'expired' | 'already_decided'
  /** Who decided: a Slack user id, or a label such as `API`. */
  by?: string
  /** When it was decided (or expired), ms since the epoch. */
  at: number
  /** Why it was denied, if the decider said. */
  reason?: string
}

/** The message that replaces an approval request once it is decided: same facts, no buttons. */
export function decisionBlocks(input: DecisionInput): SlackMessage {
  const { tool, args, outcome, by, at, reason } = input
  const who = by ? ` by ${userRef(by)}` : ''
  const when = ` at ${slackDate(at)}`
  const headline = {
    approved: `:white_check_mark: Approved${who}${when}`,
    denied: `:no_entry: Denied${who}${when}`,
    expired: `:hourglass: Expired — not run (${slackDate(at)})`,
    already_decided: `Already decided${who}`,
  }[outcome]
  const reasonLine = reason?.trim()
    ? '\n' + truncateText(`Reason: ${escapeMrkdwn(reason.trim())}`, 1000).text
    : ''
  const title = `*Tool:* ${code(tool)}\n`
  const shown = jsonCodeBlock(args, SLACK_TEXT_LIMIT - title.length)
  return {
    text: headline + ` — ${escapeMrkdwn(tool)}`,
    blocks: [section(headline + reasonLine), section(title + shown.text)],
  }
}

/** Posted in the thread when a run starts. */
export function runStartedText(input: { runId: string; task: string }): string {
  const task = truncateText(escapeMrkdwn(input.task.trim()), 500)
  return `:hourglass_flowing_sand: Working on it (run ${code(input.runId)}): ${task.text}${
    task.truncated ? '…' : ''
  }`
}

/** Posted in the thread when a run ends: the answer, or an explicit failure with its stop reason. */
export function runFinishedText(result: {
  ok: boolean
  answer: string
  stopReason: string
  steps: number
  /** A structured answer: shown compact (src/slack/structured-answer.ts), not as its text. */
  output?: unknown
}): string {
  const steps = `${result.steps} step${result.steps === 1 ? '' : 's'}`
  if (!result.ok) {
    return `:x: Run failed — stopped: ${code(result.stopReason)} after ${steps}. No answer was produced.`
  }
  if (result.output !== undefined) {
    const shown = structuredAnswerText(result.output, ANSWER_LIMIT)
    const cut = shown.truncated ? '\n_(answer truncated; the full answer is in the run trace)_' : ''
    return `${shown.text}${cut}\n_Done in ${steps}._`
  }
  const answer = truncateText(escapeMrkdwn(result.answer.trim()), ANSWER_LIMIT)
  const cut = answer.truncated ? '\n_(answer truncated; the full answer is in the run trace)_' : ''
  return `${answer.text}${cut}\n_Done in ${steps}._`
}

function buttonValue(value: ButtonValue): string {
  if (!SHA256_HEX_PATTERN.test(value.argsHash)) {
    throw new TypeError(
      `approval for call ${value.callId} in run ${value.runId}: argsHash must be 64 lowercase hex`,
    )
  }
  const json = JSON.stringify({ r: value.runId, c: value.callId, h: value.argsHash })
  if (json.length > BUTTON_VALUE_LIMIT) {
    throw new RangeError(
      `approval button value for call ${value.callId.slice(0, 80)} is ${json.length} characters, ` +
        `over Slack's ${BUTTON_VALUE_LIMIT}: use shorter run and call ids`,
    )
  }
  return json
}

function button(
  label: string,
  actionId: string,
  style: 'primary' | 'danger' | null,
  value: string,
): Block {
  return {
    type: 'button',
    text: { type: 'plain_text', text: label },
    ...(style ? { style } : {}),
    action_id: actionId,
    value,
  }
}

function section(text: string): Block {
  return { type: 'section', text: mrkdwn(text) }
}

function mrkdwn(text: string): { type: 'mrkdwn'; text: string } {
  return { type: 'mrkdwn', text }
}

/** Inline code for identifiers; backticks are dropped so they cannot end the span. */
function code(text: string): string {
  return '`' + escapeMrkdwn(text.replace(/`/g, '')) + '`'
}
