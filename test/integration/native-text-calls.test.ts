import * as z from 'zod/mini'
import { describe, expect, it } from 'vitest'
import { defineTool, toRunResult } from '../../src/kernel/index'
import { calculator } from '../../tools/calculator'
import { reply } from '../fakes/fake-openai'
import { runUntilStill, startRun, toolMessages, useWire } from './harness'

// A provider without a tool parser for the model passes the call through as text.
const wire = useWire()

const deployed: unknown[] = []
const deploy = defineTool({
  name: 'deploy',
  description: 'Deploy a service.',
  params: z.strictObject({ service: z.string() }),
  returns: 'What was deployed.',
  sideEffect: true,
  handler: (args) => {
    deployed.push(args)
    return `deployed ${args.service}`
  },
})

describe('native protocol: a tool call written into content', () => {
  it.each([
    [
      'Hermes',
      '<tool_call>\n{"name": "calculator", "arguments": {"expression": "2 + 3"}}\n</tool_call>',
      'hermes',
    ],
    ['bare JSON', '{"name": "calculator", "arguments": {"expression": "2 + 3"}}', 'json'],
    [
      'Qwen3-Coder',
      '<tool_call>\n<function=calculator>\n<parameter=expression>\n2 + 3\n</parameter>\n</function>\n</tool_call>',
      'qwen3-coder',
    ],
    ['Mistral', '[TOOL_CALLS]calculator{"expression": "2 + 3"}', 'mistral'],
  ])('is that call (%s), recorded as recovered from text', async (_name, content, family) => {
    wire.api.enqueue(reply.text(content), reply.text('It is 5.'))
    const { state, deps } = startRun([calculator], wire.model(), { protocol: 'native' })
    const out = await runUntilStill(state, deps)
    const trace = toRunResult(out.state)
    expect(trace).toMatchObject({ ok: true, answer: 'It is 5.', stopReason: 'finish' })
    const call = trace.steps[0]!.calls[0]!
    expect(call).toMatchObject({
      name: 'calculator',
      args: { expression: '2 + 3' },
      kind: 'ok',
      observation: '2 + 3 = 5',
      fromText: family,
    })
    // The provider is sent a proper tool call and its paired result, not the raw text again.
    const second = wire.api.bodies[1]!
    expect(second.messages.at(-2)).toMatchObject({
      role: 'assistant',
      tool_calls: [{ id: call.id, function: { name: 'calculator' } }],
    })
    expect(toolMessages(second)).toEqual([[call.id, '2 + 3 = 5']])
    expect(wire.api.violations).toEqual([])
  })

  it('is never a final answer, even when it is the last step', async () => {
    wire.api.enqueue(
      reply.text('<tool_call>{"name": "calculator", "arguments": {"expression": "1"}}</tool_call>'),
    )
    const { state, deps } = startRun([calculator], wire.model(), {
      protocol: 'native',
      budget: { maxSteps: 1 },
    })
    const trace = toRunResult((await runUntilStill(state, deps)).state)
    expect(trace).toMatchObject({ ok: false, answer: '', stopReason: 'max_steps' })
  })

  it('runs a side effect only from exact JSON; a repaired one is refused unrun', async () => {
    deployed.length = 0
    wire.api.enqueue(
      reply.text("<tool_call>{'name': 'deploy', 'arguments': {'service': 'api'}}</tool_call>"),
      reply.text('<tool_call>{"name": "deploy", "arguments": {"service": "web"}}</tool_call>'),
      reply.text('Deployed.'),
    )
    const { state, deps } = startRun([deploy], wire.model(), {
      protocol: 'native',
      policy: { mode: 'allow' },
    })
    const trace = toRunResult((await runUntilStill(state, deps)).state)
    const [refused, ran] = trace.steps.map((s) => s.calls[0]!)
    expect(refused).toMatchObject({ kind: 'tool_error', fromText: 'hermes' })
    expect(refused!.observation).toMatch(/^\[ToolError\] deploy: .*not executed/)
    expect(ran).toMatchObject({ kind: 'ok', observation: 'deployed web' })
    expect(deployed).toEqual([{ service: 'web' }])
    expect(trace.answer).toBe('Deployed.')
  })

  it('keeps prose that merely mentions a call as the answer', async () => {
    const answer =
      'To add numbers, a client would send {"name": "sum", "arguments": {"a": 1}} — I did it by hand: 3.'
    wire.api.enqueue(reply.text(answer))
    const { state, deps } = startRun([calculator], wire.model(), { protocol: 'native' })
    const trace = toRunResult((await runUntilStill(state, deps)).state)
    expect(trace).toMatchObject({ ok: true, answer, stopReason: 'finish' })
  })

  it('answers a call-only reply to a tool that does not exist with the real tool names', async () => {
    wire.api.enqueue(
      reply.text('{"name": "web_search", "arguments": {"q": "x"}}'),
      reply.text('Done without it.'),
    )
    const { state, deps } = startRun([calculator], wire.model(), { protocol: 'native' })
    const trace = toRunResult((await runUntilStill(state, deps)).state)
    expect(trace.steps[0]!.calls[0]!.observation).toMatch(
      /^\[ToolError\] unknown tool "web_search"/,
    )
    expect(trace.answer).toBe('Done without it.')
  })
})

describe('auto protocol: a provider that takes tools but answers in the text protocol', () => {
  it('reads its JSON actions and its finish', async () => {
    wire.api.enqueue(
      reply.text(
        '```json\n{"thought": "add", "action": "calculator", "args": {"expression": "6 * 7"}}\n```',
      ),
      reply.text('```json\n{"thought": "done", "action": "finish", "args": {"answer": "42"}}\n```'),
    )
    const { state, deps } = startRun([calculator], wire.model(), { protocol: 'auto' })
    const trace = toRunResult((await runUntilStill(state, deps)).state)
    expect(trace).toMatchObject({ ok: true, answer: '42', stopReason: 'finish' })
    expect(trace.steps[0]!.calls[0]).toMatchObject({ observation: '6 * 7 = 42', fromText: 'json' })
  })
})
