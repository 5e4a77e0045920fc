import { afterEach, describe, expect, it } from 'vitest'
import {
  APPROVE_ACTION_ID,
  DENY_ACTION_ID,
  approvalBlocks,
  decisionBlocks,
  parseButtonValue,
  runFinishedText,
  runStartedText,
  type Block,
} from '../../src/slack/approval-message'
import { SlackClient } from '../../src/slack/web-api'
import { FakeSlack } from '../fakes/fake-slack'
import { Outbound } from '../fakes/outbound'

const HASH = 'a'.repeat(40) + '0123456789abcdef01234567'
const EXPIRES = Date.UTC(2023, 10, 14, 22, 13, 20) // 1700000000 s
const request = {
  runId: 'run_01HZX',
  callId: 'call_abc123',
  tool: 'rollback_deploy',
  args: { service: 'api', to_version: 'v41', dry: false },
  reason: 'p99 doubled right after deploy v42; rolling back is the fastest mitigation.',
  argsHash: HASH,
  expiresAt: EXPIRES,
  requestedBy: 'U0REQUESTER',
}

/** Every mrkdwn / plain_text string in a message. */
function texts(blocks: Block[]): string[] {
  const out: string[] = []
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(walk)
    if (!node || typeof node !== 'object') return
    const o = node as Record<string, unknown>
    if ((o.type === 'mrkdwn' || o.type === 'plain_text') && typeof o.text === 'string')
      out.push(o.text)
    Object.values(o).forEach(walk)
  }
  walk(blocks)
  return out
}

function buttons(blocks: Block[]): Record<string, unknown>[] {
  return blocks
    .filter((b) => b.type === 'actions')
    .flatMap((b) => b.elements as Record<string, unknown>[])
}

/** The JSON inside the arguments code block, with Slack's entities decoded. */
function shownArgs(blocks: Block[]): string {
  const text = texts(blocks).find((t) => t.includes('```'))!
  const json = /```\n([\s\S]*)\n```/.exec(text)![1]!
  return json.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&')
}

let outbound: Outbound | undefined
afterEach(() => {
  outbound?.restore()
  outbound = undefined
})

describe('approvalBlocks', () => {
  it('names the tool, shows the exact arguments, the reason and the expiry', () => {
    const { text, blocks } = approvalBlocks(request)
    expect(text).toBe('Approval needed: rollback_deploy (run run_01HZX)')
    expect(blocks[0]).toEqual({
      type: 'header',
      text: { type: 'plain_text', text: 'Approval needed: rollback_deploy' },
    })
    const all = texts(blocks).join('\n')
    expect(all).toContain('*Tool:* `rollback_deploy`')
    expect(all).toContain('*Requested by:* <@U0REQUESTER>')
    expect(all).toContain(request.reason)
    expect(all).toContain(
      'Expires <!date^1700000000^{date_short_pretty} {time}|2023-11-14 22:13 UTC>',
    )
    expect(JSON.parse(shownArgs(blocks))).toEqual(request.args)
    expect(shownArgs(blocks)).toBe(JSON.stringify(request.args, null, 2))
  })

  it('has Approve (primary) and Deny (danger) buttons whose value round-trips', () => {
    const { blocks } = approvalBlocks(request)
    const [approve, deny] = buttons(blocks)
    expect(approve).toMatchObject({
      type: 'button',
      action_id: APPROVE_ACTION_ID,
      style: 'primary',
    })
    expect(deny).toMatchObject({ type: 'button', action_id: DENY_ACTION_ID, style: 'danger' })
    expect(APPROVE_ACTION_ID).toBe('edgeloop_approve')
    expect(DENY_ACTION_ID).toBe('edgeloop_deny')
    expect(JSON.parse(approve!.value as string)).toEqual({
      r: 'run_01HZX',
      c: 'call_abc123',
      h: HASH,
    })
    for (const button of [approve, deny]) {
      expect(parseButtonValue(button!.value as string)).toEqual({
        ok: true,
        value: { runId: 'run_01HZX', callId: 'call_abc123', argsHash: HASH },
      })
    }
  })

  it('escapes control sequences so arguments and reasons cannot ping or close the code block', () => {
    const args = { message: '<!channel> deploy & ```rm -rf``` <@U999|boss>', nested: { k: '<x>' } }
    const { blocks } = approvalBlocks({
      ...request,
      args,
      reason: 'ping <!here> & <https://evil.test|docs>',
    })
    const all = texts(blocks).join('\n')
    expect(all).not.toMatch(/<!channel>|<!here>|<@U999|<https:/)
    expect(all).toContain('ping &lt;!here&gt; &amp; &lt;https://evil.test|docs&gt;')
    // Exactly one fence pair: the backticks inside the value cannot end the block early.
    expect(
      texts(blocks)
        .find((t) => t.includes('```'))!
        .match(/```/g),
    ).toHaveLength(2)
    expect(JSON.parse(shownArgs(blocks))).toEqual(args)
  })

  it('truncates very long arguments and reasons under the 3000-character limit, saying so', () => {
    const args = {
      body: 'x'.repeat(10_000) + '<>&'.repeat(1000),
      list: Array.from({ length: 500 }, (_, i) => i),
    }
    const { blocks } = approvalBlocks({ ...request, args, reason: 'why '.repeat(2000) })
    for (const text of texts(blocks)) expect(text.length).toBeLessThanOrEqual(3000)
    const all = texts(blocks).join('\n')
    expect(all).toContain(
      'Arguments truncated for display; the approval covers the full arguments.',
    )
    expect(all).not.toMatch(/&[a-z]{0,3}\n```/) // never a half entity before the closing fence
    expect(buttons(blocks)).toHaveLength(2)
  })

  it('shows that the model gave no reason', () => {
    expect(texts(approvalBlocks({ ...request, reason: '  ' }).blocks).join('\n')).toContain(
      '_(the model gave no reason)_',
    )
  })

  it('is accepted by the fake Slack, which enforces Block Kit limits', async () => {
    const slack = new FakeSlack({ token: 'xoxb-t' })
    const client = new SlackClient({ token: 'xoxb-t', baseUrl: 'https://slack.test/api' })
    outbound = new Outbound().on('slack.test', slack.handler).install()
    const big = { ...request, tool: 't'.repeat(400), args: { a: 'y'.repeat(9000) } }
    await client.postMessage({ channel: 'C1', ...approvalBlocks(big) })
    const [posted] = slack.messages('C1')
    const decided = decisionBlocks({ ...big, outcome: 'approved', by: 'U1', at: EXPIRES })
    await client.update({ channel: 'C1', ts: posted!.ts, ...decided })
    expect(slack.messages('C1')[0]).toMatchObject({ updates: 1 })
    expect(buttons(slack.messages('C1')[0]!.blocks as Block[])).toEqual([])

    // The fake really checks: an over-long section is refused as Slack would.
    const tooLong = [{ type: 'section', text: { type: 'mrkdwn', text: 'z'.repeat(3001) } }]
    await expect(client.postMessage({ channel: 'C1', text: 'x', blocks: tooLong })).rejects.toThrow(
      /invalid_blocks/,
    )
  })

  it('rejects ids too long for a 2000-character button value, naming the call', () => {
    expect(() => approvalBlocks({ ...request, runId: 'r'.repeat(2000) })).toThrow(
      /call_abc123.*over Slack's 2000/,
    )
  })

  it('rejects an args hash that is not 64 lowercase hex', () => {
    expect(() => approvalBlocks({ ...request, argsHash: HASH.toUpperCase() })).toThrow(TypeError)
  })
})

describe('parseButtonValue', () => {
  it.each([
    ['not JSON', 'approve', /not JSON/],
    ['no run id', JSON.stringify({ c: 'c', h: HASH }), /lacks/],
    ['an empty call id', JSON.stringify({ r: 'r', c: '', h: HASH }), /lacks/],
    ['a short hash', JSON.stringify({ r: 'r', c: 'c', h: 'abc' }), /lacks/],
    ['a JSON string', '"x"', /lacks/],
  ])('rejects %s', (_name, value, error) => {
    const result = parseButtonValue(value)
    expect(result.ok).toBe(false)
    if (!result.ok) expect(result.error).toMatch(error)
  })
})

describe('decisionBlocks', () => {
  const base = { tool: 'rollback_deploy', args: request.args, at: EXPIRES }
  const date = '<!date^1700000000^{date_short_pretty} {time}|2023-11-14 22:13 UTC>'
  it.each([
    // A Slack person as decisions record them, and as decisions stored before that did.
    [
      { outcome: 'approved', by: 'slack:U0APPROVER' } as const,
      `Approved by <@U0APPROVER> at ${date}`,
    ],
    [{ outcome: 'approved', by: 'U0APPROVER' } as const, `Approved by <@U0APPROVER> at ${date}`],
    [{ outcome: 'approved', by: 'slack:not a user' } as const, 'Approved by slack:not a user at'],
    [
      { outcome: 'denied', by: 'U0APPROVER', reason: 'not during peak' } as const,
      `Denied by <@U0APPROVER> at ${date}\nReason: not during peak`,
    ],
    [{ outcome: 'expired' } as const, 'Expired — not run'],
    [{ outcome: 'already_decided', by: 'W0OTHER' } as const, 'Already decided by <@W0OTHER>'],
    [{ outcome: 'approved', by: 'API <token>' } as const, 'Approved by API &lt;token&gt; at'],
  ])('%o reads "%s" and has no buttons', (decision, expected) => {
    const { text, blocks } = decisionBlocks({ ...base, ...decision })
    expect(texts(blocks).join('\n')).toContain(expected)
    expect(text).toContain(expected.split('\n')[0]!)
    expect(buttons(blocks)).toEqual([])
    expect(JSON.parse(shownArgs(blocks))).toEqual(request.args)
  })
})

describe('run texts', () => {
  it('announces the start with the run id and the task', () => {
    expect(runStartedText({ runId: 'run_1', task: 'why is <!channel> p99 up?' })).toBe(
      ':hourglass_flowing_sand: Working on it (run `run_1`): why is &lt;!channel&gt; p99 up?',
    )
  })

  it('gives the answer on success', () => {
    const text = runFinishedText({
      ok: true,
      answer: 'Rolled back to v41.',
      stopReason: 'finish',
      steps: 3,
    })
    expect(text).toBe('Rolled back to v41.\n_Done in 3 steps._')
  })

  it.each(['max_steps', 'token_budget', 'timeout', 'cancelled'])(
    'fails explicitly on %s, never showing an answer',
    (stopReason) => {
      const text = runFinishedText({ ok: false, answer: 'half an answer', stopReason, steps: 1 })
      expect(text).toBe(
        `:x: Run failed — stopped: \`${stopReason}\` after 1 step. No answer was produced.`,
      )
      expect(text).not.toContain('half an answer')
    },
  )

  it('truncates a very long answer, saying where the rest is', () => {
    const text = runFinishedText({
      ok: true,
      answer: 'a'.repeat(10_000),
      stopReason: 'finish',
      steps: 2,
    })
    expect(text.length).toBeLessThan(4000)
    expect(text).toContain('answer truncated')
  })
})
