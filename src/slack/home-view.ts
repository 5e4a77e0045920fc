/**
 * The app's Home tab (docs/slack-app.md#app-home): what waits for the person viewing it, each
 * pending item with the buttons its card has (Approve / Deny / Edit, a choice or Answer and
 * Decline, Connect). The buttons carry the same values as the cards', so a click is decided the
 * same way.
 */
import { APPROVE_ACTION_ID, DENY_ACTION_ID, EDIT_ACTION_ID, type Block } from './approval-message'
import { escapeMrkdwn, jsonCodeBlock, slackDate, truncateText } from './mrkdwn'
import {
  ANSWER_ACTION_PREFIX,
  ANSWER_MODAL_ACTION_ID,
  DECLINE_QUESTION_ACTION_ID,
} from './question-message'

/** One pending item as the Home tab shows it. */
export interface HomeItem {
  runId: string
  callId: string
  kind: 'approval' | 'question' | 'connect'
  tool: string
  args: unknown
  hash: string
  expiresAt: number
  /** What a question or connect item asks. */
  message: string | null
  choices: string[] | null
  editable: boolean
  /** A connect item's authorization link. */
  url: string | null
}

/** The Connect button: a link, which Slack also reports as a click (acknowledged, nothing more). */
export const CONNECT_ACTION_ID = 'edgeloop_connect'
// Slack's limits: 100 blocks in a view; an item takes four.
const MAX_ITEMS = 20

/** The Home view: a header, then each item (or why none are shown). */
export function homeView(input: { items: HomeItem[]; notice: string | null }): Block {
  const blocks: Block[] = [{ type: 'header', text: plain('Waiting for you') }]
  if (input.notice) blocks.push(section(escapeMrkdwn(input.notice)))
  else if (!input.items.length) blocks.push(section('Nothing is waiting for you.'))
  for (const item of input.items.slice(0, MAX_ITEMS)) blocks.push(...itemBlocks(item))
  if (input.items.length > MAX_ITEMS) {
    const more = input.items.length - MAX_ITEMS
    blocks.push(context(`${more} more in the console's inbox.`))
  }
  return { type: 'home', blocks }
}

function itemBlocks(item: HomeItem): Block[] {
  const { runId, callId, hash } = item
  const value = (extra: Record<string, string> = {}) =>
    JSON.stringify({ r: runId, c: callId, h: hash, ...extra })
  const facts = `Expires ${slackDate(item.expiresAt)} · run \`${runId}\` · call \`${escapeMrkdwn(callId)}\``
  let text: string
  let buttons: Block[]
  if (item.kind === 'approval') {
    text = `*Approval: \`${escapeMrkdwn(item.tool)}\`*\n${jsonCodeBlock(item.args, 1500).text}`
    buttons = [
      button('Approve', APPROVE_ACTION_ID, value(), 'primary'),
      button('Deny', DENY_ACTION_ID, value(), 'danger'),
      ...(item.editable ? [button('Edit', EDIT_ACTION_ID, value())] : []),
    ]
  } else if (item.kind === 'question') {
    text = `*Question:* ${truncateText(escapeMrkdwn(item.message ?? ''), 1500).text}`
    const choices = item.choices ?? []
    buttons = choices.length
      ? choices.map((c, i) => button(c, `${ANSWER_ACTION_PREFIX}${i}`, value({ a: c }), 'primary'))
      : [button('Answer', ANSWER_MODAL_ACTION_ID, value(), 'primary')]
    buttons.push(button('Decline', DECLINE_QUESTION_ACTION_ID, value(), 'danger'))
  } else {
    text = `*Connect:* ${truncateText(escapeMrkdwn(item.message ?? 'an account'), 1500).text}`
    buttons = item.url
      ? [{ ...button('Connect', CONNECT_ACTION_ID, value(), 'primary'), url: item.url }]
      : []
  }
  return [
    { type: 'divider' },
    section(text),
    context(facts),
    ...(buttons.length ? [{ type: 'actions', elements: buttons }] : []),
  ]
}

function button(
  label: string,
  actionId: string,
  value: string,
  style?: 'primary' | 'danger',
): Block {
  return {
    type: 'button',
    text: plain(truncateText(label, 75).text),
    action_id: actionId,
    value,
    ...(style ? { style } : {}),
  }
}

function section(text: string): Block {
  return { type: 'section', text: { type: 'mrkdwn', text } }
}

function context(text: string): Block {
  return { type: 'context', elements: [{ type: 'mrkdwn', text }] }
}

function plain(text: string): { type: 'plain_text'; text: string } {
  return { type: 'plain_text', text }
}
