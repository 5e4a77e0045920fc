/** Who may decide approvals from Slack: the `SLACK_APPROVERS` list and the self-approval rule. */
import { userRef } from './mrkdwn'

const SLACK_USER_ID = /^[UW][A-Z0-9]{2,}$/

/** Parse `SLACK_APPROVERS` (comma-separated Slack user ids); throws a TypeError naming a bad entry. */
export function parseApprovers(csv: string | undefined): string[] {
  const ids = (csv ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '')
  for (const id of ids) {
    if (!SLACK_USER_ID.test(id)) {
      throw new TypeError(
        `SLACK_APPROVERS: ${JSON.stringify(id)} is not a Slack user id ` +
          '(expected U… or W…, e.g. U012AB3CD; find it under the profile’s "Copy member ID")',
      )
    }
  }
  return [...new Set(ids)]
}

export interface ApprovalAttempt {
  approvers: readonly string[]
  /** The Slack user who clicked. */
  userId: string
  /** The Slack user who started the run, if one did. */
  requestedBy?: string
  forbidSelfApproval: boolean
  /** Denying one's own request is always allowed; only approving is restricted. */
  decision?: 'approve' | 'deny'
}

/** Whether `userId` may make this decision; the reason is shown to the user when not. */
export function canApprove(input: ApprovalAttempt): { ok: true } | { ok: false; reason: string } {
  const { approvers, userId, requestedBy, forbidSelfApproval, decision = 'approve' } = input
  if (approvers.length === 0) {
    return {
      ok: false,
      reason:
        'SLACK_APPROVERS is not configured, so nobody may decide approvals from Slack; ' +
        'set it to a comma-separated list of Slack user ids',
    }
  }
  if (!approvers.includes(userId)) {
    return { ok: false, reason: `${userRef(userId)} is not in SLACK_APPROVERS; ask an approver` }
  }
  if (decision === 'approve' && forbidSelfApproval && requestedBy === userId) {
    return {
      ok: false,
      reason:
        'SLACK_FORBID_SELF_APPROVAL is set: you started this run, so another approver must approve it',
    }
  }
  return { ok: true }
}
