/** What Slack shows of agents: the approval card names a run's agent; structured answers. */
import { describe, expect, it } from 'vitest'
import { approvalBlocks, runFinishedText } from '../../src/slack/approval-message'
import { slackAgent } from '../../src/runs/start/slack-agent'
import type { ServiceConfig } from '../../src/config'

const REQUEST = {
  runId: 'run_1',
  callId: 'call_1',
  tool: 'rollback_deploy',
  args: { service: 'order' },
  reason: 'Roll back.',
  argsHash: 'a'.repeat(64),
  expiresAt: Date.parse('2026-12-01T12:00:00Z'),
}

describe('Slack messages and agents', () => {
  it('the approval card names the agent (not the default one)', () => {
    const text = JSON.stringify(approvalBlocks({ ...REQUEST, agent: 'oncall' }).blocks)
    expect(text).toContain('*Agent:* `oncall`')
    expect(JSON.stringify(approvalBlocks(REQUEST).blocks)).not.toContain('*Agent:*')
  })

  it('a structured answer of plain fields is one line per field, escaped', () => {
    const output = { severity: 'sev1', component: '<!channel> api', page: 3, known: null }
    const text = runFinishedText({ ok: true, answer: '', stopReason: 'finish', steps: 2, output })
    expect(text).toBe(
      '*severity:* sev1\n*component:* &lt;!channel&gt; api\n*page:* 3\n*known:* null\n' +
        '_Done in 2 steps._',
    )
  })

  it('a nested structured answer is its JSON in a code block', () => {
    const output = { a: 1, tags: ['x'] }
    const text = runFinishedText({ ok: true, answer: '', stopReason: 'finish', steps: 1, output })
    expect(text).toBe('```\n{\n  "a": 1,\n  "tags": [\n    "x"\n  ]\n}\n```\n_Done in 1 step._')
  })
})

describe('which agent a Slack message asks for', () => {
  const config = {
    agents: [
      { name: 'default', slackChannels: [] },
      { name: 'oncall', slackChannels: ['C0INCIDENT'] },
      { name: 'triage', slackChannels: [] },
    ],
  } as unknown as ServiceConfig

  it.each([
    ['triage: the API is down', 'C0OTHER', undefined, { agent: 'triage', task: 'the API is down' }],
    ['the API is down', 'C0INCIDENT', undefined, { agent: 'oncall', task: 'the API is down' }],
    ['what now?', 'C0INCIDENT', 'triage', { agent: 'triage', task: 'what now?' }],
    ['note: disk full', 'C0OTHER', undefined, { task: 'note: disk full' }],
    ['plain', 'C0OTHER', 'gone', { task: 'plain' }],
  ])('%j in %s (follow-up of %s)', (text, channel, previousAgent, expected) => {
    expect(
      slackAgent(config, text, { channel, ...(previousAgent ? { previousAgent } : {}) }),
    ).toEqual(expected)
  })
})
