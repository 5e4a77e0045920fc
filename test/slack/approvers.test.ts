import { describe, expect, it } from 'vitest'
import { canApprove, parseApprovers } from '../../src/slack/approvers'

describe('parseApprovers', () => {
  it.each([
    [undefined, []],
    ['', []],
    [' , ', []],
    ['U012AB3CD', ['U012AB3CD']],
    ['U012AB3CD, W0ENTERPRISE ,U012AB3CD,', ['U012AB3CD', 'W0ENTERPRISE']],
  ])('%j → %j', (csv, expected) => {
    expect(parseApprovers(csv)).toEqual(expected)
  })

  it.each(['bob', 'u012ab3cd', 'C012AB3CD', '<@U012AB3CD>', 'U012AB3CD U999'])(
    'throws a TypeError naming %j',
    (bad) => {
      expect(() => parseApprovers(`U0GOOD1, ${bad}`)).toThrow(TypeError)
      expect(() => parseApprovers(`U0GOOD1, ${bad}`)).toThrow(
        `SLACK_APPROVERS: ${JSON.stringify(bad)} is not a Slack user id`,
      )
    },
  )
})

describe('canApprove', () => {
  const approvers = ['U0ALICE', 'U0BOB']
  it.each([
    ['an approver', { userId: 'U0ALICE', requestedBy: 'U0CAROL', forbidSelfApproval: true }],
    [
      'an approver approving their own run when allowed',
      { userId: 'U0ALICE', requestedBy: 'U0ALICE', forbidSelfApproval: false },
    ],
    [
      'an approver denying their own run',
      {
        userId: 'U0ALICE',
        requestedBy: 'U0ALICE',
        forbidSelfApproval: true,
        decision: 'deny' as const,
      },
    ],
    ['an approver on a run nobody in Slack started', { userId: 'U0BOB', forbidSelfApproval: true }],
  ])('allows %s', (_name, attempt) => {
    expect(canApprove({ approvers, ...attempt })).toEqual({ ok: true })
  })

  it.each([
    [
      'anyone when no approvers are configured',
      { approvers: [], userId: 'U0ALICE', forbidSelfApproval: false },
      /SLACK_APPROVERS is not configured/,
    ],
    [
      'someone not in the list',
      { approvers, userId: 'U0MALLORY', forbidSelfApproval: false },
      /<@U0MALLORY> is not in SLACK_APPROVERS/,
    ],
    [
      'self-approval when forbidden',
      { approvers, userId: 'U0BOB', requestedBy: 'U0BOB', forbidSelfApproval: true },
      /SLACK_FORBID_SELF_APPROVAL/,
    ],
    [
      'a non-approver denying',
      { approvers, userId: 'U0MALLORY', forbidSelfApproval: false, decision: 'deny' as const },
      /not in SLACK_APPROVERS/,
    ],
  ])('refuses %s', (_name, attempt, reason) => {
    const result = canApprove(attempt)
    expect(result.ok).toBe(false)
    if (!result.ok) expect(result.reason).toMatch(reason)
  })
})
