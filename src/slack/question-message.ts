/**
 * Block Kit for a question a run asks a person (docs/slack-app.md#questions): the question, a
 * button per choice and Decline. A question without choices (free text, or a JSON Schema) has an
 * Answer button instead, which opens a modal (slack/person-modal.ts).
 */
import * as z from 'zod/mini'
import { escapeMrkdwn, slackDate, SLACK_TEXT_LIMIT, truncateText, userRef } from './mrkdwn'
import type { Block, SlackMessage } from './approval-message'
import { BUTTON_VALUE_LIMIT } from './approval-message'
import type { Parsed } from './payloads'
import { SHA256_HEX_PATTERN } from '../validation/patterns'

/** A choice button's action id starts with this, then its index (ids are unique in a block). */
export const ANSWER_ACTION_PREFIX = 'edgeloop_answer_'
export const DECLINE_QUESTION_ACTION_ID = 'edgeloop_decline_question'
/** Opens the modal that answers a question without choices (slack/person-modal.ts). */
export const ANSWER_MODAL_ACTION_ID = 'edgeloop_answer_modal'

export interface QuestionRequest {
  runId: string
  callId: string
  question: string
  choices: string[] | null
  /** The item's hash: an answer binds to exactly this question. */
  hash: string
  expiresAt: number
}

export interface QuestionButton {
  runId: string
  callId: string
  hash: string
  /** The choice a button answers with; absent on Decline. */
  answer?: string
}

const QuestionValueSchema = z.object({
  r: z.string().check(z.minLength(1)),
  c: z.string().check(z.minLength(1)),
  h: z.string().check(z.regex(SHA256_HEX_PATTERN)),
  a: z.optional(z.string()),
})

/** The question card: the question, its choices as buttons, Decline. */
export function questionBlocks(input: QuestionRequest): SlackMessage {
  const { runId, callId, hash, expiresAt } = input
  const text = truncateText(escapeMrkdwn(input.question), SLACK_TEXT_LIMIT - 20).text
  const buttons: Block[] = (input.choices ?? []).map((choice, i) =>
    button(choice, `${ANSWER_ACTION_PREFIX}${i}`, 'primary', {
      r: runId,
      c: callId,
      h: hash,
      a: choice,
    }),
  )
  const value = { r: runId, c: callId, h: hash }
  if (!input.choices?.length)
    buttons.push(button('Answer', ANSWER_MODAL_ACTION_ID, 'primary', value))
  buttons.push(button('Decline', DECLINE_QUESTION_ACTION_ID, 'danger', value))
  const how = input.choices?.length ? 'Choose an answer, or decline.' : 'Answer, or decline.'
  return {
    text: `Question from run ${escapeMrkdwn(runId)}: ${truncateText(input.question, 200).text}`,
    blocks: [
      { type: 'header', text: { type: 'plain_text', text: 'Question for you' } },
      { type: 'section', text: { type: 'mrkdwn', text: `*${text}*` } },
      {
        type: 'context',
        elements: [
          { type: 'mrkdwn', text: `${how} Expires ${slackDate(expiresAt)} · run \`${runId}\`` },
        ],
      },
      { type: 'actions', block_id: 'edgeloop_question', elements: buttons },
    ],
  }
}

/** Decode a question button's `value`. */
export function parseQuestionValue(value: string): Parsed<QuestionButton> {
  let json: unknown
  try {
    json = JSON.parse(value)
  } catch {
    return { ok: false, error: 'question button value is not JSON' }
  }
  const parsed = QuestionValueSchema.safeParse(json)
  if (!parsed.success) {
    return { ok: false, error: 'question button value lacks a run id, call id or 64-hex hash' }
  }
  const { r, c, h, a } = parsed.data
  return {
    ok: true,
    value: { runId: r, callId: c, hash: h, ...(a !== undefined ? { answer: a } : {}) },
  }
}

function button(
  label: string,
  actionId: string,
  style: 'primary' | 'danger',
  value: Record<string, string>,
): Block {
  const json = JSON.stringify(value)
  if (json.length > BUTTON_VALUE_LIMIT) {
    throw new RangeError(
      `question button value is ${json.length} characters, over Slack's ${BUTTON_VALUE_LIMIT}`,
    )
  }
  return {
    type: 'button',
    text: { type: 'plain_text', text: truncateText(label, 75).text },
    style,
    action_id: actionId,
    value: json,
  }
}

/** The message that replaces a question card once it is answered, declined or expired. */
export function questionDecidedBlocks(input: {
  question: string
  outcome: 'answered' | 'declined' | 'expired'
  by?: string
  at: number
  answer?: unknown
}): SlackMessage {
  const who = input.by ? ` by ${userRef(input.by)}` : ''
  const answer =
    typeof input.answer === 'string' ? input.answer : JSON.stringify(input.answer ?? null)
  const headline = {
    answered: `:white_check_mark: Answered${who}: ${truncateText(escapeMrkdwn(answer), 500).text}`,
    declined: `:no_entry: Declined${who}`,
    expired: `:hourglass: Expired — nobody answered (${slackDate(input.at)})`,
  }[input.outcome]
  const question = truncateText(escapeMrkdwn(input.question), SLACK_TEXT_LIMIT - 10).text
  return {
    text: headline,
    blocks: [
      { type: 'section', text: { type: 'mrkdwn', text: headline } },
      { type: 'section', text: { type: 'mrkdwn', text: `*${question}*` } },
    ],
  }
}
