/**
 * The modals a person fills in Slack (docs/slack-app.md#modals): an approval's arguments edited
 * before approving, and the answer to a question that has no choices (free text, or a JSON
 * Schema: the agent's `ask_person` or an MCP server's requested schema). The modal carries the
 * item it decides in `private_metadata`, bound by the item's hash as the buttons are.
 */
import * as z from 'zod/mini'
import type { Block } from './approval-message'
import {
  fieldBlocks,
  flatFields,
  INPUT_LIMIT,
  JSON_BLOCK_ID,
  jsonBlock,
  readFields,
  readJson,
  readText,
  TEXT_BLOCK_ID,
  textBlock,
  type FieldSpec,
  type ReadBack,
  type ViewValues,
} from './modal-fields'
import { escapeMrkdwn, SLACK_TEXT_LIMIT, truncateText } from './mrkdwn'
import type { Parsed } from './payloads'
import { SHA256_HEX_PATTERN } from '../validation/patterns'

export { EDIT_ACTION_ID } from './approval-message'
export { ANSWER_MODAL_ACTION_ID } from './question-message'
/** The modals' `callback_id`s. */
export const EDIT_CALLBACK_ID = 'edgeloop_edit_args'
export const ANSWER_CALLBACK_ID = 'edgeloop_answer_question'
// Slack's limits: a modal title, submit and close text 24 characters, private_metadata 3000.
const TITLE_LIMIT = 24
const METADATA_LIMIT = 3000
const BUTTON_LIMIT = 75

/** What a modal decides: the item (run, call, hash), where its card is, and how to read it. */
export interface ModalItem {
  runId: string
  callId: string
  hash: string
  /** The card's channel: the submission is checked against the run's origin as a click is. */
  channel: string | null
  /** A flat schema's fields; null: one JSON input (or the free text of a question). */
  fields: FieldSpec[] | null
}

const MetadataSchema = z.object({
  r: z.string().check(z.minLength(1)),
  c: z.string().check(z.minLength(1)),
  h: z.string().check(z.regex(SHA256_HEX_PATTERN)),
  ch: z.nullable(z.string()),
  f: z.nullable(
    z.array(z.tuple([z.string(), z.enum(['string', 'number', 'integer', 'boolean', 'enum'])])),
  ),
})

/** A modal view (`views.open`), or why the item cannot be done in one. */
export type ModalView = { ok: true; view: Block } | { ok: false; reason: string }

/** The modal that edits call `tool`'s arguments, prefilled with the model's. */
export function editModal(input: {
  item: Omit<ModalItem, 'fields'>
  tool: string
  args: Record<string, unknown>
  schema: Record<string, unknown>
}): ModalView {
  const { item, tool, args, schema } = input
  const fields = flatFields(schema)
  const inputs = fields
    ? fieldBlocks(schema, fields, args)
    : [jsonBlock('Arguments (JSON)', args, `A JSON object of ${tool}'s arguments.`)]
  if (!fields && JSON.stringify(args, null, 2).length > INPUT_LIMIT)
    return { ok: false, reason: `${tool}'s arguments are too long to edit in Slack` }
  const intro = `Change the arguments of \`${escapeMrkdwn(tool.replace(/`/g, ''))}\`, then approve: the call runs with what you submit, checked against the tool's schema first.`
  return modal({
    callbackId: EDIT_CALLBACK_ID,
    title: 'Edit, then approve',
    submit: 'Approve edited',
    item: { ...item, fields },
    blocks: [section(intro), ...inputs],
  })
}

/** The modal that answers a question: one input per field of a flat schema, JSON, or free text. */
export function answerModal(input: {
  item: Omit<ModalItem, 'fields'>
  question: string
  schema: Record<string, unknown> | null
}): ModalView {
  const { item, question, schema } = input
  const fields = schema ? flatFields(schema) : null
  const inputs = !schema
    ? [textBlock('Your answer')]
    : fields
      ? fieldBlocks(schema, fields, {})
      : [jsonBlock('Answer (JSON)', defaultOf(schema), schemaHint(schema))]
  const shown = truncateText(escapeMrkdwn(question), SLACK_TEXT_LIMIT - 4).text
  return modal({
    callbackId: ANSWER_CALLBACK_ID,
    title: 'Answer the question',
    submit: 'Answer',
    item: { ...item, fields },
    blocks: [section(`*${shown}*`), ...inputs],
  })
}

/**
 * A modal that only says something (what replaces a form whose item was decided meanwhile).
 * `mrkdwn` is shown as it is, as an ephemeral note's text is: whoever builds it escapes outside
 * text (`escapeMrkdwn`) and names people with `userRef`, so a mention renders as one.
 */
export function noticeModal(title: string, mrkdwn: string): Block {
  return {
    type: 'modal',
    title: plain(truncateText(title, TITLE_LIMIT).text),
    close: plain('Close'),
    blocks: [section(truncateText(mrkdwn, SLACK_TEXT_LIMIT).text)],
  }
}

/** The `action_id` of a modal's link button: Slack reports its click, which decides nothing. */
export const OPEN_LINK_ACTION_ID = 'edgeloop_open_link'

/**
 * A modal that hands over a link (a click in the Home tab, which has no thread for a private
 * note): what it is for, and a button that opens `url` in the browser. Block Kit takes the URL
 * as it is there (no mrkdwn, nothing escaped); Slack allows 3,000 characters.
 */
export function linkModal(input: {
  title: string
  text: string
  label: string
  url: string
}): Block {
  return {
    type: 'modal',
    title: plain(truncateText(input.title, TITLE_LIMIT).text),
    close: plain('Close'),
    blocks: [
      section(truncateText(escapeMrkdwn(input.text), SLACK_TEXT_LIMIT).text),
      {
        type: 'actions',
        elements: [
          {
            type: 'button',
            text: plain(truncateText(input.label, BUTTON_LIMIT).text),
            action_id: OPEN_LINK_ACTION_ID,
            url: input.url,
            style: 'primary',
          },
        ],
      },
    ],
  }
}

/** Decode a modal's `private_metadata`. */
export function parseModalItem(metadata: string): Parsed<ModalItem> {
  let json: unknown
  try {
    json = JSON.parse(metadata)
  } catch {
    return { ok: false, error: 'modal private_metadata is not JSON' }
  }
  const parsed = MetadataSchema.safeParse(json)
  if (!parsed.success)
    return { ok: false, error: 'modal private_metadata lacks a run id, call id or 64-hex hash' }
  const { r, c, h, ch, f } = parsed.data
  return { ok: true, value: { runId: r, callId: c, hash: h, channel: ch, fields: f } }
}

/**
 * What a submitted modal holds: an edit's arguments, a question's answer. `textAnswer`: the
 * question has neither choices nor schema, so its answer is the free text.
 */
export function readModal(item: ModalItem, values: ViewValues, textAnswer: boolean): ReadBack {
  if (item.fields) return readFields(values, item.fields)
  return textAnswer ? readText(values) : readJson(values)
}

/** The block an error that names no field of the modal is shown under. */
export function fallbackBlock(item: ModalItem, textAnswer: boolean): string {
  if (item.fields?.length) return `f:${item.fields[0]![0]}`
  return textAnswer ? TEXT_BLOCK_ID : JSON_BLOCK_ID
}

function modal(input: {
  callbackId: string
  title: string
  submit: string
  item: ModalItem
  blocks: Block[]
}): ModalView {
  const { item } = input
  const metadata = JSON.stringify({
    r: item.runId,
    c: item.callId,
    h: item.hash,
    ch: item.channel,
    f: item.fields,
  })
  if (metadata.length > METADATA_LIMIT)
    return { ok: false, reason: 'the item has too many fields to show in Slack' }
  return {
    ok: true,
    view: {
      type: 'modal',
      callback_id: input.callbackId,
      title: plain(input.title),
      submit: plain(input.submit),
      close: plain('Cancel'),
      private_metadata: metadata,
      blocks: input.blocks,
    },
  }
}

/** What a JSON answer box starts with: the schema's default, else an empty object or list. */
function defaultOf(schema: Record<string, unknown>): unknown {
  if ('default' in schema) return schema.default
  return schema.type === 'array' ? [] : schema.type === 'object' ? {} : ''
}

function schemaHint(schema: Record<string, unknown>): string {
  return truncateText(`A JSON value matching: ${JSON.stringify(schema)}`, 1000).text
}

function section(text: string): Block {
  return { type: 'section', text: { type: 'mrkdwn', text } }
}

function plain(text: string): { type: 'plain_text'; text: string } {
  return { type: 'plain_text', text }
}
