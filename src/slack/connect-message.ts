/**
 * Block Kit for a `connect` item (docs/slack-app.md#connections): what to connect and for whom,
 * **Connect** (which sends the person who may grant it a single-use link, privately) and
 * **Decline**; and the message that replaces the card once it is resolved.
 */
import type { Block, SlackMessage } from './approval-message'
import { escapeMrkdwn, slackDate, SLACK_TEXT_LIMIT, truncateText, userRef } from './mrkdwn'

export const CONNECT_ACTION_ID = 'edgeloop_connect'
export const DECLINE_CONNECT_ACTION_ID = 'edgeloop_decline_connect'

/** The connect card: the item's message, Connect and Decline (values as a question's buttons). */
export function connectBlocks(input: {
  runId: string
  callId: string
  hash: string
  message: string
  expiresAt: number
}): SlackMessage {
  const { runId, callId, hash } = input
  const value = JSON.stringify({ r: runId, c: callId, h: hash })
  const text = truncateText(escapeMrkdwn(input.message), SLACK_TEXT_LIMIT - 4).text
  const how = 'Connect sends you a single-use link, if the connection is yours to grant.'
  return {
    text: `Connection needed for run ${escapeMrkdwn(runId)}: ${truncateText(input.message, 200).text}`,
    blocks: [
      { type: 'header', text: { type: 'plain_text', text: 'Connection needed' } },
      { type: 'section', text: { type: 'mrkdwn', text: `*${text}*` } },
      {
        type: 'context',
        elements: [
          {
            type: 'mrkdwn',
            text: `${how} Expires ${slackDate(input.expiresAt)} · run \`${runId}\``,
          },
        ],
      },
      {
        type: 'actions',
        block_id: 'edgeloop_connect',
        elements: [
          button('Connect', CONNECT_ACTION_ID, 'primary', value),
          button('Decline', DECLINE_CONNECT_ACTION_ID, 'danger', value),
        ],
      },
    ],
  }
}

/** The message that replaces a connect card once the item is resolved. */
export function connectDecidedBlocks(input: {
  message: string
  outcome: 'connected' | 'declined' | 'expired'
  by?: string
  at: number
}): SlackMessage {
  const who = input.by ? ` by ${userRef(input.by)}` : ''
  const headline = {
    connected: `:white_check_mark: Connected${who}`,
    declined: `:no_entry: Declined${who}`,
    expired: `:hourglass: Expired — nobody connected it (${slackDate(input.at)})`,
  }[input.outcome]
  const message = truncateText(escapeMrkdwn(input.message), SLACK_TEXT_LIMIT - 10).text
  return {
    text: headline,
    blocks: [
      { type: 'section', text: { type: 'mrkdwn', text: headline } },
      { type: 'section', text: { type: 'mrkdwn', text: `*${message}*` } },
    ],
  }
}

function button(
  label: string,
  actionId: string,
  style: 'primary' | 'danger',
  value: string,
): Block {
  return {
    type: 'button',
    text: { type: 'plain_text', text: label },
    style,
    action_id: actionId,
    value,
  }
}
