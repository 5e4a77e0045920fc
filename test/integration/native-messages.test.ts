import { toJSONSchema } from 'zod/v4/core'
import { describe, expect, it } from 'vitest'
import { readObservationTool, toRunResult, type Tool } from '../../src/kernel/index'
import { calculator } from '../../tools/calculator'
import { createHttpGetTool } from '../../tools/http-get'
import { reply } from '../fakes/fake-openai'
import { framed, useWire, runUntilStill, startRun, toolMessages } from './harness'

const DOCS_HOST = 'docs.allowed.test'
const wire = useWire({
  [DOCS_HOST]: () =>
    new Response('{"status":"green"}', { headers: { 'content-type': 'application/json' } }),
})

const httpGet = createHttpGetTool({ allowlist: [DOCS_HOST] })

/** The JSON Schema the model must be sent for a tool: its zod params as input, no `$schema`. */
function schemaOf(tool: Tool) {
  const { $schema: _drop, ...rest } = toJSONSchema(tool.params, { io: 'input' }) as Record<
    string,
    unknown
  >
  return rest
}

describe('native protocol through the real OpenAI client', () => {
  it('sends system, task, assistant tool_calls and one paired tool message per call, step by step', async () => {
    wire.api.enqueue(
      reply.toolCalls(
        [
          // Ids deliberately out of lexical order: pairing must follow the call order.
          { id: 'call_b', name: 'calculator', arguments: { expression: '2 + 3' } },
          { id: 'call_a', name: 'calculator', arguments: { expression: '7 * 6' } },
        ],
        { content: 'Two sums first.' },
      ),
      reply.toolCalls([
        { id: 'call_c', name: 'http_get', arguments: { url: `https://${DOCS_HOST}/status` } },
      ]),
      reply.text('5, 42 and the status is green.'),
    )
    const { state, deps } = startRun([calculator, httpGet], wire.model(), {
      task: 'Add, multiply, check status.',
      protocol: 'native',
    })

    const out = await runUntilStill(state, deps)

    expect(out.end).toBe('done')
    expect(toRunResult(out.state)).toMatchObject({
      ok: true,
      answer: '5, 42 and the status is green.',
      stopReason: 'finish',
      protocol: 'native',
      model: 'gpt-test',
    })
    expect(wire.api.violations).toEqual([])
    const [first, second, third] = wire.api.bodies
    expect(wire.api.bodies).toHaveLength(3)

    // Every request: the same model, temperature 0, every tool (read_observation built in) with
    // the JSON Schema of its zod params.
    const tools = [calculator, httpGet, readObservationTool].map((t) => ({
      type: 'function',
      function: { name: t.name, description: t.description, parameters: schemaOf(t) },
    }))
    for (const body of wire.api.bodies) {
      expect(body).toMatchObject({ model: 'gpt-test', temperature: 0, tool_choice: 'auto' })
      expect(body.tools).toEqual(tools)
    }
    expect(first!.tools![0]!.function.parameters).toMatchObject({
      type: 'object',
      properties: { expression: { type: 'string' } },
      required: ['expression'],
    })

    const head = [
      { role: 'system', content: expect.stringContaining('call tools') },
      { role: 'user', content: 'Task: Add, multiply, check status.' },
    ]
    expect(first!.messages).toEqual(head)

    const step0 = [
      {
        role: 'assistant',
        content: 'Two sums first.',
        tool_calls: [
          {
            id: 'call_b',
            type: 'function',
            function: { name: 'calculator', arguments: '{"expression":"2 + 3"}' },
          },
          {
            id: 'call_a',
            type: 'function',
            function: { name: 'calculator', arguments: '{"expression":"7 * 6"}' },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_b', content: framed('calculator', '2 + 3 = 5') },
      { role: 'tool', tool_call_id: 'call_a', content: framed('calculator', '7 * 6 = 42') },
    ]
    expect(second!.messages).toEqual([...head, ...step0])

    const step1 = [
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_c',
            type: 'function',
            function: { name: 'http_get', arguments: `{"url":"https://${DOCS_HOST}/status"}` },
          },
        ],
      },
      {
        role: 'tool',
        tool_call_id: 'call_c',
        content: framed('http_get', 'HTTP 200 OK (application/json)\n\n{\n  "status": "green"\n}'),
      },
    ]
    expect(third!.messages).toEqual([...head, ...step0, ...step1])
    expect(wire.outbound.to(DOCS_HOST)).toHaveLength(1)
  })

  it('records the assistant text that came with tool calls as the step thought', async () => {
    wire.api.enqueue(
      reply.toolCalls([{ id: 'call_1', name: 'calculator', arguments: { expression: '1+1' } }], {
        content: 'I will add.',
      }),
      reply.text('2'),
    )
    const { state, deps } = startRun([calculator], wire.model(), { protocol: 'native' })
    const out = await runUntilStill(state, deps)
    const trace = toRunResult(out.state)
    expect(trace.steps.map((s) => [s.kind, s.thought, s.finishReason])).toEqual([
      ['action', 'I will add.', 'tool_calls'],
      ['finish', '', 'stop'],
    ])
    expect(trace.steps[0]!.calls[0]).toMatchObject({
      id: 'call_1',
      name: 'calculator',
      args: { expression: '1+1' },
      observation: '1+1 = 2',
      kind: 'ok',
    })
  })
})

describe('tool call ids as providers really send them', () => {
  it.each([
    ['repeated ids', ['dup', 'dup']],
    ['empty ids', ['', '']],
  ])('%s are made unique and every result pairs with its own call', async (_label, ids) => {
    wire.api.enqueue(
      reply.toolCalls([
        { id: ids[0], name: 'calculator', arguments: { expression: '1 + 1' } },
        { id: ids[1], name: 'calculator', arguments: { expression: '2 + 2' } },
      ]),
      reply.text('2 and 4'),
    )
    const { state, deps } = startRun([calculator], wire.model(), { protocol: 'native' })
    const out = await runUntilStill(state, deps)

    expect(wire.api.violations).toEqual([])
    expect(out.state.result).toMatchObject({ ok: true, answer: '2 and 4' })
    const sent = wire.api.lastBody().messages
    const assistantIds = sent
      .find((m) => m.role === 'assistant')!
      .tool_calls.map((c: { id: string }) => c.id)
    expect(new Set(assistantIds).size).toBe(2)
    expect(sent.filter((m) => m.role === 'tool')).toEqual([
      { role: 'tool', tool_call_id: assistantIds[0], content: framed('calculator', '1 + 1 = 2') },
      { role: 'tool', tool_call_id: assistantIds[1], content: framed('calculator', '2 + 2 = 4') },
    ])
  })

  it('tool calls with finish_reason "stop" (as some providers send) still run', async () => {
    wire.api.enqueue(
      reply.toolCalls([{ id: 'call_s', name: 'calculator', arguments: { expression: '3 * 3' } }], {
        finishReason: 'stop',
      }),
      reply.text('9'),
    )
    const { state, deps } = startRun([calculator], wire.model(), { protocol: 'native' })
    const out = await runUntilStill(state, deps)
    expect(toolMessages(wire.api.lastBody())).toEqual([['call_s', '3 * 3 = 9']])
    expect(out.state.result).toMatchObject({ ok: true, answer: '9' })
  })
})
