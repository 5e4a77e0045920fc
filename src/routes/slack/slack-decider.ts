import type { Context } from 'hono'
import { loadConfig } from '../../config'
import { logEvent } from '../../runs/log'
import { findCall } from '../../kernel/calls'
import type { DecideResponse, RunView } from '../../runs/types'
import { escapeMrkdwn, userRef } from '../../slack/mrkdwn'
import { canApprove } from '../../slack/approvers'
import type { AppEnv } from '../app-env'

/**
 * The identity a Slack user's decisions are recorded under (`decidedBy`, an edit's `by`):
 * `slack:<user>`, as a Slack-started run's requester is (docs/human-in-the-loop.md).
 */
export function slackPerson(userId: string): string {
  return `slack:${userId}`
}

/** Where a Slack decision comes from: who, in which workspace, from which channel (none: a view). */
export interface SlackDecider {
  userId: string
  teamId: string | undefined
  /** The channel of the card clicked; null for a click in a view (a modal, the Home tab). */
  channel: string | null
  decision: 'approve' | 'deny'
  callId: string
}

/**
 * Why `who` may not decide an item of `view` from Slack, or null when they may: the run must be
 * Slack's and of the same workspace (and channel, for a card), and the person an approver
 * (`SLACK_APPROVERS`, the self-approval rule). A refusal is logged.
 */
export function slackRefusal(c: Context<AppEnv>, view: RunView, who: SlackDecider): string | null {
  const { userId, callId } = who
  const wrongPlace = originRefusal(c, view, who)
  if (wrongPlace) return wrongPlace
  const config = loadConfig(c.env).slack
  const requestedBy = view.requestedBy.startsWith('slack:') ? view.requestedBy.slice(6) : undefined
  const allowed = canApprove({
    approvers: config.approvers,
    userId,
    forbidSelfApproval: config.forbidSelfApproval,
    decision: who.decision,
    ...(requestedBy ? { requestedBy } : {}),
  })
  if (allowed.ok) return null
  logEvent(c.env, 'slack_unauthorised_click', { runId: view.id, callId, userId }, 'warn')
  return `You can't decide this approval: ${allowed.reason}`
}

/** Why a click on an item of `view` is out of place (another workspace or channel), or null. */
export function originRefusal(c: Context<AppEnv>, view: RunView, who: SlackDecider): string | null {
  const wrongPlace = clickOutsideOrigin(view, who.teamId, who.channel)
  if (!wrongPlace) return null
  const { userId, callId } = who
  logEvent(c.env, 'slack_click_outside_origin', { runId: view.id, callId, userId }, 'warn')
  return `You can't decide this approval here: ${wrongPlace}`
}

/**
 * Buttons are only ever posted in the run's own Slack place (its thread, or the approvals channel
 * of a run not started from Slack): a click from another workspace or channel (a copied button
 * value) is refused, as is one for a run that posts nothing in Slack. A view (a modal opened from
 * the card, the Home tab) has no channel: the workspace must match.
 */
function clickOutsideOrigin(
  view: RunView,
  teamId: string | undefined,
  channel: string | null,
): string | undefined {
  const origin = view.slack
  if (!origin) return `run ${view.id} posts nothing in Slack`
  if (origin.teamId !== undefined && teamId !== origin.teamId) {
    return `run ${view.id} belongs to another Slack workspace`
  }
  if (channel !== null && origin.channel !== channel)
    return `run ${view.id} answers in another channel`
  return undefined
}

/** What a clicker is told when the run refused the decision (mrkdwn, the run's message escaped). */
export function refusalText(
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
      return `Nothing was changed: ${escapeMrkdwn(out.message)}`
  }
}

/** Why the system closed call `callId` (`expired`, `cancelled`), as the run last showed it. */
export function closedReason(view: RunView, callId: string): string | undefined {
  const call = findCall(view.result, callId)?.call
  return call?.approval?.decidedBy === 'system' ? (call.approval.reason ?? undefined) : undefined
}
