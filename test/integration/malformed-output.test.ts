import { describe, expect, it } from 'vitest'
import { pendingApprovals, toRunResult } from '../../src/kernel/index'
import { calculator } from '../../tools/calculator'
import { createHttpPostTool } from '../../tools/http-post'
import { reply, type FakeReply } from '../fakes/fake-openai'
import { created, useWire, RECEIVER_HOST, runUntilStill, startRun, toolMessages } from './harness'

const wire = useWire({ [RECEIVER_HOST]: created })

const httpPost = createHttpPostTool({ allowlist: [RECEIVER_HOST] })

/** Runs [calculator, http_post] under `ask` (no hook) until done or waiting. */
async function run(...replies: FakeReply[]) {
  wire.api.enqueue(...replies)
  const { state, deps } = startRun([calculator, httpPost], wire.model(), {
    protocol: 'native',
    policy: { mode: 'ask' },
  })
  const out = await runUntilStill(state, deps)
  expect(wire.api.violations).toEqual([])
  return out
}

const once = (name: string, args: string, id = 'call_1') =>
  reply.toolCalls([{ id, name, arguments: args }])

describe('malformed tool-call arguments', () => {
  it.each([
    ['a trailing comma', '{"expression": "2 + 2",}'],
    ['single quotes', "{'expression': '2 + 2'}"],
    ['a code fence', '```json\n{"expression": "2 + 2"}\n```'],
  ])('read-only calculator with %s is repaired and run', async (_label, args) => {
    const out = await run(once('calculator', args), reply.text('4'))

    expect(toolMessages(wire.api.lastBody())).toEqual([['call_1', '2 + 2 = 4']])
    // The model's exact text is replayed, so the provider sees what it sent.
    const assistant = wire.api.lastBody().messages.find((m) => m.role === 'assistant')!
    expect(assistant.tool_calls[0].function.arguments).toBe(args)
    expect(toRunResult(out.state)).toMatchObject({ ok: true, answer: '4' })
  })

  it('read-only calculator with unrepairable arguments → a clear [ToolError] the model sees', async () => {
    const out = await run(once('calculator', 'expression = 2 + 2'), reply.text('gave up'))

    const [[id, content]] = toolMessages(wire.api.lastBody()) as [[string, string]]
    expect(id).toBe('call_1')
    expect(content).toMatch(/^\[ToolError\] calculator: arguments are not valid JSON/)
    expect(content).toContain('could not be repaired into a JSON object')
    expect(content).toContain('Send the arguments as one JSON object matching: {')
    expect(content).toContain('"expression"')
    expect(out.state.steps[0]!.calls[0]).toMatchObject({ kind: 'tool_error' })
  })

  it.each([
    ['a trailing comma', `{"url":"https://${RECEIVER_HOST}/x","body":{"a":1},}`],
    ['single quotes', `{'url':'https://${RECEIVER_HOST}/x','body':{}}`],
    ['a cut-off object', `{"url":"https://${RECEIVER_HOST}/x","body":{"a":`],
    ['a JSON array', '[1, 2]'],
  ])('side-effecting http_post with %s is never executed and asks nobody', async (_label, args) => {
    const out = await run(once('http_post', args), reply.text('could not post'))

    expect(out.end).toBe('done')
    expect(wire.outbound.to(RECEIVER_HOST)).toEqual([])
    const call = out.state.steps[0]!.calls[0]!
    expect(call.approval).toBeNull()
    expect(pendingApprovals(out.state)).toEqual([])
    expect(call).toMatchObject({ status: 'done', kind: 'tool_error' })
    const [[, content]] = toolMessages(wire.api.lastBody()) as [[string, string]]
    expect(content).toMatch(
      /^\[ToolError\] http_post: arguments (are not valid JSON|must be a JSON object)/,
    )
    expect(content).toContain('The call was not executed.')
    expect(toRunResult(out.state)).toMatchObject({ ok: true, answer: 'could not post' })
  })
})

describe('model output the kernel must not take as an answer', () => {
  it('a hallucinated tool name → [ToolError] naming the available tools', async () => {
    const out = await run(
      once('search_web', '{"q":"order errors"}', 'call_x'),
      reply.text('no such tool, answering directly'),
    )

    expect(toolMessages(wire.api.lastBody())).toEqual([
      [
        'call_x',
        '[ToolError] unknown tool "search_web". Available tools: calculator, http_post, read_observation',
      ],
    ])
    expect(out.state.result).toMatchObject({ ok: true })
  })

  it.each([
    ['empty content', reply.text('')],
    ['null content', reply.text(null)],
  ])('%s with no tool calls → [FormatError], then the run goes on', async (_label, empty) => {
    const out = await run(empty, reply.text('the answer'))

    const trace = toRunResult(out.state)
    expect(trace.steps.map((s) => s.kind)).toEqual(['format_error', 'finish'])
    const last = wire.api.lastBody().messages.slice(-2)
    expect(last).toEqual([
      { role: 'assistant', content: '' },
      {
        role: 'user',
        content:
          '[FormatError] your reply had no text and no tool call. Call one of the tools, or reply with the final answer as plain text.',
      },
    ])
    expect(trace).toMatchObject({ ok: true, answer: 'the answer' })
  })

  it('finish_reason "length" is a format error, never the answer', async () => {
    const out = await run(
      reply.text('The root cause is', { finishReason: 'length' }),
      reply.text('The root cause is the pool size.'),
    )

    const trace = toRunResult(out.state)
    expect(trace.steps.map((s) => [s.kind, s.finishReason])).toEqual([
      ['format_error', 'length'],
      ['finish', 'stop'],
    ])
    expect(wire.api.lastBody().messages.at(-1)).toEqual({
      role: 'user',
      content: expect.stringMatching(/^\[FormatError\] your reply was cut off at the token limit/),
    })
    expect(trace.answer).toBe('The root cause is the pool size.')
  })

  it('finish_reason "length" with cut-off tool calls runs nothing', async () => {
    const out = await run(
      reply.toolCalls(
        [{ id: 'call_1', name: 'http_post', arguments: `{"url":"https://${RECEIVER_HOST}/x"` }],
        { finishReason: 'length' },
      ),
      reply.text('stopped'),
    )
    expect(wire.outbound.to(RECEIVER_HOST)).toEqual([])
    expect(out.state.steps[0]).toMatchObject({ kind: 'format_error', calls: [] })
  })

  it('only "length" replies until the error budget → unparsable_exhausted, ok:false', async () => {
    const cut = () => reply.text('partial', { finishReason: 'length' })
    wire.api.enqueue(cut(), cut(), cut())
    const { state, deps } = startRun([calculator], wire.model(), { protocol: 'native' })
    const out = await runUntilStill(state, deps)
    expect(toRunResult(out.state)).toMatchObject({
      ok: false,
      answer: '',
      stopReason: 'unparsable_exhausted',
    })
  })

  it('finish_reason "content_filter" → ok:false, stopReason content_filter', async () => {
    const out = await run(reply.text('I cannot', { finishReason: 'content_filter' }))

    expect(toRunResult(out.state)).toMatchObject({
      ok: false,
      answer: '',
      stopReason: 'content_filter',
      error: expect.stringContaining('content_filter'),
    })
    expect(wire.api.bodies).toHaveLength(1)
  })
})
