import { describe, expect, it } from 'vitest'
import type { ChatMessage, ModelResponse } from '../../src/kernel/model'
import { demoModel } from '../../src/llm/demo-script'
import { OpenAIModel } from '../../src/llm/openai-model'
import { FAKE_OPENAI_BASE_URL, FAKE_OPENAI_KEY, reply } from '../fakes/fake-openai'
import { useWire } from '../integration/harness'

/** Plays the demo like the kernel would: every call gets an observation, the rollback `rollback`. */
async function play(rollback: string) {
  const model = demoModel()
  const messages: ChatMessage[] = [
    { role: 'system', content: 'You are an on-call engineer.' },
    { role: 'user', content: 'The order service is failing. Find out why and mitigate.' },
  ]
  const turns: ModelResponse[] = []
  for (;;) {
    const res = await model.complete({ protocol: 'native', messages, tools: [], timeoutMs: 1_000 })
    turns.push(res)
    if (!res.toolCalls) break
    messages.push({ role: 'assistant', content: res.text ?? null, tool_calls: res.toolCalls })
    for (const call of res.toolCalls) {
      const content =
        call.function.name === 'rollback_deploy' ? rollback : `result of ${call.function.name}`
      messages.push({ role: 'tool', tool_call_id: call.id, content })
    }
  }
  return { turns, messages }
}

describe('demo script', () => {
  it('investigates in four tool turns with valid arguments, then answers', async () => {
    const { turns } = await play('rolled back order to v2.13.2')
    const calls = turns.map((t) =>
      (t.toolCalls ?? []).map((c) => [c.function.name, JSON.parse(c.function.arguments)]),
    )
    expect(calls).toEqual([
      [
        ['query_metrics', { service: 'order', metric: 'error_rate', window_minutes: 60 }],
        ['query_metrics', { service: 'gateway', metric: 'error_rate', window_minutes: 60 }],
      ],
      [['search_logs', { service: 'order', query: 'error', limit: 20 }]],
      [
        ['read_repo_file', { path: 'CHANGELOG.md' }],
        ['read_repo_file', { path: 'services/order/config/db.yaml' }],
      ],
      [
        [
          'rollback_deploy',
          { service: 'order', to_version: 'v2.13.2', reason: expect.stringContaining('50 to 10') },
        ],
      ],
      [],
    ])
    const ids = turns.flatMap((t) => t.toolCalls ?? []).map((c) => c.id)
    expect(ids).toEqual([
      'call_demo_1',
      'call_demo_2',
      'call_demo_3',
      'call_demo_4',
      'call_demo_5',
      'call_demo_6',
    ])
    expect(turns.map((t) => t.finishReason)).toEqual([
      'tool_calls',
      'tool_calls',
      'tool_calls',
      'tool_calls',
      'stop',
    ])
    expect(turns.every((t) => t.usage && t.usage.promptTokens > 0 && t.text)).toBe(true)
  })

  it.each([
    [
      'approved',
      'Rolled back order from v2.14.0 to v2.13.2 (deploy d-42).',
      /rolled the order service back/,
      /NOT performed/,
    ],
    [
      'denied',
      '[ToolError] rollback_deploy was denied by @alice',
      /NOT performed \(\[ToolError\] rollback_deploy was denied by @alice\)/,
      /rolled the order service back/,
    ],
    [
      'expired',
      '[ToolError] approval for rollback_deploy expired after 24h',
      /NOT performed/,
      /rolled the order service back/,
    ],
    [
      'dry run',
      '[DryRun] rollback_deploy was not run (dry-run policy).',
      /NOT performed/,
      /rolled the order service back/,
    ],
  ])(
    'the final answer follows the rollback outcome (%s)',
    async (_name, observation, present, absent) => {
      const { turns } = await play(observation)
      const answer = turns.at(-1)!.text!
      expect(answer).toContain('v2.14.0')
      expect(answer).toContain('timeout acquiring connection from pool (in use 10/10, max 10)')
      expect(answer).toMatch(present)
      expect(answer).not.toMatch(absent)
      if (observation.startsWith('[ToolError]'))
        expect(answer).toMatch(/raise max_connections .* back to 50 manually/)
    },
  )

  it('is exhausted after the final answer', async () => {
    const { messages, turns } = await play('ok')
    messages.push(
      { role: 'assistant', content: turns.at(-1)!.text! },
      { role: 'user', content: 'and?' },
    )
    await expect(
      demoModel().complete({ protocol: 'native', messages, timeoutMs: 1_000 }),
    ).rejects.toThrow('no output for turn 5')
  })

  describe('on the wire', () => {
    const wire = useWire()

    it('its conversation is one the real API accepts (tool_call_id pairing and order)', async () => {
      const { messages } = await play('[ToolError] denied')
      wire.api.enqueue(reply.text('ok'))
      const model = new OpenAIModel({
        baseURL: FAKE_OPENAI_BASE_URL,
        apiKey: FAKE_OPENAI_KEY,
        model: 'gpt-test',
      })
      await model.complete({ protocol: 'text', messages, timeoutMs: 2_000 })
      expect(wire.api.violations).toEqual([])
      expect(wire.api.lastBody().messages).toEqual(messages)
    })
  })
})
