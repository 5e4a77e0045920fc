/**
 * Whether API tokens with `approvals:write` may decide the approvals of Slack-started runs
 * (`API_APPROVES_SLACK_RUNS`, default false): those are otherwise decided only in Slack, by
 * SLACK_APPROVERS, so a token cannot go around the Slack approver list.
 */
export function apiDecidesSlackRuns(setting: string | undefined): boolean {
  const v = setting?.trim()
  return v !== undefined && /^(1|true|yes)$/i.test(v)
}
