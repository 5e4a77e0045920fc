/**
 * Block Kit for a question a run asks a person (docs/slack-app.md#questions): the question, a
 * button per choice and Decline. A question without choices is answered in the console or the
 * API, which the card says.
 */
import * as z from 'zod/mini'
import { escapeMrkdwn, slackDate, SLACK_TEXT_LIMIT, truncateText } from './mrkdwn'
import type { Block, SlackMessage } from './approval-message'
import { BUTTON_VALUE_LIMIT } from './approval-message'
import type { Parsed } from './payloads'
import { SHA256_HEX_PATTERN } from '../validation/patterns'

/** A choice button's action id starts with this, then its index (ids are unique in a block). */
export const ANSWER_ACTION_PREFIX = 'edgeloop_answer_'
export const DECLINE_QUESTION_ACTION_ID = 'edgeloop_decline_question'

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
  buttons.push(
    button('Decline', DECLINE_QUESTION_ACTION_ID, 'danger', { r: runId, c: callId, h: hash }),
  )
  const how = input.choices?.length
    ? 'Choose an answer, or decline.'
    : `Answer in the console, or with POST /v1/runs/${runId}/questions/${callId}; or decline here.`
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
