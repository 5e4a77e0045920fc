import type { PendingKind } from '../../kernel/state'

/**
 * The outbox key of the Slack card of a call's pending item, and of its decision's update: the
 * call id, as it always was for approvals and questions; a `connect` item, which may follow an
 * approval on the same call (a grant found dead when the approved call is sent), its own.
 */
export function slackCardKey(callId: string, kind: PendingKind): string {
  return kind === 'connect' ? `${callId}:connect` : callId
}
