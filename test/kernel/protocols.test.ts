import * as z from 'zod/mini'
import { describe, expect, it } from 'vitest'
import {
  ModelError,
  react,
  TEXT_PROTOCOL_FORMAT,
  ToolRegistry,
  type ChatMessage,
} from '../../src/kernel/index'
import {
  framed,
  nativeAnswer,
  nativeCall,
  nativeCalls,
  ScriptedModel,
  textAction,
  textFinish,
} from '../fakes/scripted-model'
import { deployTool, recordingTool, type Ran } from './harness'

function fixtures() {
  const ran: Ran = []
  const lookup = recordingTool(ran, {
    name: 'lookup',
    description: 'Look a word up in the dictionary.',
    params: z.object({ q: z.string() }),
    returns: 'The entry.',
    answer: (args) => `entry for ${args.q}`,
  })
  return { ran, tools: [lookup, deployTool(ran, () => 'deployed')] }
}

describe('native protocol', () => {
  it('pairs each tool message with its call id, in call order, in the next request', async () => {
    const { ran, tools } = fixtures()
    const calls = [
      nativeCall('lookup', { q: 'cat' }, 'call_b'),
      nativeCall('lookup', { q: 'dog' }, 'call_a'),
      nativeCall('lookup', { q: 'eel' }, 'call_c'),
    ]
    const model = new ScriptedModel([nativeCalls(calls, 'Three words.'), nativeAnswer('done')])
    const result = await react('define three words', tools, { model })
    expect(result.ok).toBe(true)
    expect(ran.map((r) => r.callId)).toEqual(['call_b', 'call_a', 'call_c'])
    const [first, second] = model.requests
    expect(first!.protocol).toBe('native')
    expect(first!.tools!.map((t) => t.function.name)).toEqual([
      'lookup',
      'deploy',
      'read_observation',
    ])
    expect(first!.messages).toEqual([
      { role: 'system', content: expect.any(String) },
      { role: 'user', content: 'Task: define three words' },
    ])
    expect(second!.messages.slice(0, 2)).toEqual(first!.messages)
    expect(second!.messages.slice(2)).toEqual<ChatMessage[]>([
      { role: 'assistant', content: 'Three words.', tool_calls: calls },
      { role: 'tool', tool_call_id: 'call_b', content: framed('lookup', 'entry for cat') },
      { role: 'tool', tool_call_id: 'call_a', content: framed('lookup', 'entry for dog') },
      { role: 'tool', tool_call_id: 'call_c', content: framed('lookup', 'entry for eel') },
    ])
  })

  it('gives empty and repeated call ids unique ones, used in both the calls and the results', async () => {
    const { tools } = fixtures()
    const model = new ScriptedModel([
      nativeCalls([
        nativeCall('lookup', { q: 'a' }, ''),
        nativeCall('lookup', { q: 'b' }, 'dup'),
        nativeCall('lookup', { q: 'c' }, 'dup'),
      ]),
      nativeAnswer('done'),
    ])
    const result = await react('t', tools, { model })
    const ids = result.steps[0]!.calls.map((c) => c.id)
    expect(new Set(ids).size).toBe(3)
    expect(ids).not.toContain('')
    const next = model.requests[1]!.messages
    const assistant = next[2] as Extract<ChatMessage, { role: 'assistant' }>
    expect(assistant.tool_calls!.map((c) => c.id)).toEqual(ids)
    expect(next.slice(3).map((m) => (m as { tool_call_id: string }).tool_call_id)).toEqual(ids)
  })

  it('repairs malformed arguments of a read-only tool', async () => {
    const { ran, tools } = fixtures()
    const model = new ScriptedModel([
      nativeCalls([nativeCall('lookup', "{q: 'cat',}", 'c1')]),
      nativeAnswer('done'),
    ])
    const result = await react('t', tools, { model })
    expect(ran).toEqual([{ name: 'lookup', args: { q: 'cat' }, callId: 'c1' }])
    // The model's own argument text is what it is shown again.
    const assistant = model.requests[1]!.messages[2] as Extract<ChatMessage, { role: 'assistant' }>
    expect(assistant.tool_calls![0]!.function.arguments).toBe("{q: 'cat',}")
    expect(result.steps[0]!.calls[0]!.observation).toBe('entry for cat')
  })

  it('answers unusable arguments of a read-only tool with a clear [ToolError]', async () => {
    const { ran, tools } = fixtures()
    const model = new ScriptedModel([
      nativeCalls([nativeCall('lookup', '["cat"]', 'c1')]),
      nativeAnswer('done'),
    ])
    const result = await react('t', tools, { model })
    expect(ran).toEqual([])
    const call = result.steps[0]!.calls[0]!
    expect(call.observation).toMatch(
      /^\[ToolError\] lookup: arguments must be a JSON object, got array/,
    )
    expect(call.observation).toContain('Send the arguments as one JSON object matching: {')
    expect(call.argsError).toBeTruthy()
  })

  it.each([
    ['repairable', "{service: 'api'}"],
    ['truncated', '{"service": "ap'],
    ['not an object', '"api"'],
  ])('never runs a side-effecting tool with %s arguments', async (_label, raw) => {
    const { ran, tools } = fixtures()
    const model = new ScriptedModel([
      nativeCalls([nativeCall('deploy', raw, 'c1')]),
      nativeAnswer('ok'),
    ])
    const result = await react('t', tools, { model, confirm: { mode: 'allow' } })
    expect(ran).toEqual([])
    const call = result.steps[0]!.calls[0]!
    expect(call.kind).toBe('tool_error')
    expect(call.observation).toMatch(/^\[ToolError\] deploy: .* The call was not executed\./)
  })

  it('tells the model a hallucinated tool does not exist and which do', async () => {
    const { tools } = fixtures()
    const model = new ScriptedModel([
      nativeCalls([nativeCall('web_search', { q: 'x' }, 'c1')]),
      nativeAnswer('ok'),
    ])
    const result = await react('t', tools, { model })
    expect(model.requests[1]!.messages.at(-1)).toEqual({
      role: 'tool',
      tool_call_id: 'c1',
      content: framed(
        'web_search',
        '[ToolError] unknown tool "web_search". Available tools: lookup, deploy, read_observation',
      ),
    })
    expect(result.ok).toBe(true)
  })
})

describe('auto protocol', () => {
  it('falls back to text when the provider rejects tools', async () => {
    const { tools } = fixtures()
    const model = new ScriptedModel((request) =>
      request.protocol === 'native'
        ? new ModelError('this model does not support tools', {
            status: 400,
            code: 'tools_unsupported',
          })
        : textFinish('plain text works'),
    )
    const result = await react('t', tools, { model, protocol: 'auto' })
    expect(result).toMatchObject({ ok: true, answer: 'plain text works', protocol: 'text' })
    expect(model.requests.map((r) => r.protocol)).toEqual(['native', 'text'])
    expect(model.requests[1]!.tools).toBeUndefined()
    expect(result.usage.modelCalls).toBe(1)
  })

  it('does not fall back when native was asked for explicitly', async () => {
    const { tools } = fixtures()
    const model = new ScriptedModel([new ModelError('no tools', { code: 'tools_unsupported' })])
    const result = await react('t', tools, { model, protocol: 'native' })
    expect(result).toMatchObject({ ok: false, stopReason: 'model_error', answer: '' })
    expect(model.requests).toHaveLength(1)
  })
})

describe('text protocol', () => {
  it('sends the system prompt with tool specs, the task, and the trajectory', async () => {
    const { tools } = fixtures()
    const model = new ScriptedModel([
      textAction('lookup', { q: 'cat' }, 'Need the entry.'),
      textFinish('A cat.'),
    ])
    const result = await react('what is a cat?', tools, { model, protocol: 'text' })
    expect(result.ok).toBe(true)
    const [first, second] = model.requests
    expect(first!.protocol).toBe('text')
    expect(first!.tools).toBeUndefined()
    const system = first!.messages[0]!
    expect(system.role).toBe('system')
    expect(system.content).toContain(TEXT_PROTOCOL_FORMAT)
    const registry = new ToolRegistry(tools)
    expect(system.content).toContain('### lookup\nLook a word up in the dictionary.')
    expect(system.content).toContain(
      `Parameters (JSON Schema): ${JSON.stringify(registry.jsonSchema('lookup'))}`,
    )
    expect(system.content).toContain('### deploy (side effect: needs approval)')
    expect(system.content).toContain('### read_observation')
    expect(first!.messages.slice(1)).toEqual([{ role: 'user', content: 'Task: what is a cat?' }])
    expect(second!.messages.slice(0, 2)).toEqual(first!.messages)
    expect(second!.messages.slice(2)).toEqual([
      { role: 'assistant', content: textAction('lookup', { q: 'cat' }, 'Need the entry.').text },
      { role: 'user', content: framed('lookup', 'entry for cat') },
    ])
    expect(result.steps[0]!.thought).toBe('Need the entry.')
  })

  it('never runs a side effect whose action needed repair to parse', async () => {
    const { ran, tools } = fixtures()
    const model = new ScriptedModel([
      {
        text: "```json\n{'thought': 'go', 'action': 'deploy', 'args': {'service': 'api',},}\n```",
        finishReason: 'stop',
      },
      textFinish('ok'),
    ])
    const result = await react('t', tools, { model, protocol: 'text', confirm: { mode: 'allow' } })
    expect(ran).toEqual([])
    expect(result.steps[0]!.calls[0]).toMatchObject({ name: 'deploy', kind: 'tool_error' })
    expect(result.steps[0]!.calls[0]!.observation).toMatch(/The call was not executed\./)
  })

  it('runs a read-only action that needed repair', async () => {
    const { ran, tools } = fixtures()
    const model = new ScriptedModel([
      {
        text: "{'thought': 'go', 'action': 'lookup', 'args': {'q': 'cat',},}",
        finishReason: 'stop',
      },
      textFinish('ok'),
    ])
    await react('t', tools, { model, protocol: 'text' })
    expect(ran).toEqual([{ name: 'lookup', args: { q: 'cat' }, callId: 's0c0' }])
  })
})
