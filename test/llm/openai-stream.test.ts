import { describe, expect, it } from 'vitest'
import { ModelError } from '../../src/errors/model-error'
import type { ModelRequest, ModelResponse, ToolSchema } from '../../src/kernel/model'
import { reply, type FakeReply } from '../fakes/fake-openai'
import { useWire } from '../integration/harness'

const wire = useWire()

const TOOLS: ToolSchema[] = [
  {
    type: 'function',
    function: {
      name: 'query_metrics',
      description: 'Reads a metric',
      parameters: { type: 'object', properties: { service: { type: 'string' } } },
    },
  },
]

function request(overrides: Partial<ModelRequest> = {}): ModelRequest {
  return {
    protocol: 'native',
    messages: [{ role: 'user', content: 'hi' }],
    tools: TOOLS,
    timeoutMs: 5_000,
    ...overrides,
  }
}

/** The same scripted reply answered whole and streamed: the two responses. */
async function bothWays(make: () => FakeReply): Promise<[ModelResponse, ModelResponse, string[]]> {
  wire.api.enqueue(make(), make())
  const whole = await wire.model({ stream: 'off' }).complete(request())
  const deltas: string[] = []
  const streamed = await wire
    .model({ stream: 'on' })
    .complete(request({ onText: (d) => deltas.push(d) }))
  // Each answer carries the provider's id of its own completion (the first chunk's, streamed).
  expect(whole.id).toMatch(/^chatcmpl-fake-\d+$/)
  expect(streamed.id).toMatch(/^chatcmpl-fake-\d+$/)
  expect(streamed.id).not.toBe(whole.id)
  const { id: _whole, ...wholeRest } = whole
  const { id: _streamed, ...streamedRest } = streamed
  return [wholeRest, streamedRest, deltas]
}

describe('streamed model calls', () => {
  it('ask for stream with usage in auto (the default), and nothing of it when off', async () => {
    wire.api.enqueue(reply.text('a'), reply.text('b'))
    await wire.model().complete(request())
    expect(wire.api.bodies[0]).toMatchObject({
      stream: true,
      stream_options: { include_usage: true },
    })
    await wire.model({ stream: 'off' }).complete(request())
    expect('stream' in wire.api.bodies[1]!).toBe(false)
    expect('stream_options' in wire.api.bodies[1]!).toBe(false)
  })

  it('give the same text, finish reason, usage and model as the whole answer', async () => {
    const text = 'Paris is the capital — «Île-de-France» 🗼 and {"braces": "in text"}.'
    const usage = {
      prompt_tokens: 31,
      completion_tokens: 17,
      prompt_tokens_details: { cached_tokens: 8 },
    }
    const [whole, streamed, deltas] = await bothWays(() =>
      reply.text(text, { usage, finishReason: 'length', model: 'gpt-test-2026' }),
    )
    expect(streamed).toEqual(whole)
    expect(streamed).toMatchObject({
      text,
      finishReason: 'length',
      model: 'gpt-test-2026',
      usage: { promptTokens: 31, completionTokens: 17, cachedPromptTokens: 8 },
    })
    expect(deltas.length).toBeGreaterThan(5)
    expect(deltas.join('')).toBe(text)
  })

  it.each([
    [1, 1],
    [2, 3],
    [5, 11],
  ])(
    'assemble tool calls whose deltas are split every %i characters, bytes every %i',
    async (pieceChars, writeBytes) => {
      wire.api.pieceChars = pieceChars
      wire.api.writeBytes = writeBytes
      const calls = [
        {
          id: 'call_a',
          name: 'query_metrics',
          arguments: { service: 'order', note: 'naïve "quoted" \\ 日本' },
        },
        { id: 'call_b', name: 'query_metrics', arguments: '{"service":"gateway"}' },
        { id: 'call_c', name: 'query_metrics', arguments: '' },
      ]
      const [whole, streamed, deltas] = await bothWays(() =>
        reply.toolCalls(calls, { content: 'Checking all three.' }),
      )
      expect(streamed).toEqual(whole)
      expect(streamed.finishReason).toBe('tool_calls')
      expect(streamed.toolCalls!.map((c) => [c.id, c.function.arguments])).toEqual([
        ['call_a', JSON.stringify(calls[0]!.arguments)],
        ['call_b', '{"service":"gateway"}'],
        ['call_c', ''],
      ])
      expect(deltas.join('')).toBe('Checking all three.')
    },
  )

  it('have no usage when the provider sends none, as the whole answer has none', async () => {
    const [whole, streamed] = await bothWays(() => reply.text('x', { usage: null }))
    expect(streamed).toEqual(whole)
    expect(streamed.usage).toBeUndefined()
  })

  it('read a provider that ignores stream and answers JSON as it answered', async () => {
    wire.api.enqueue(
      reply.raw({
        id: 'x',
        object: 'chat.completion',
        created: 1,
        model: 'gpt-test',
        choices: [
          { index: 0, message: { role: 'assistant', content: 'plain' }, finish_reason: 'stop' },
        ],
        usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
      }),
    )
    const res = await wire.model().complete(request())
    expect(res).toMatchObject({ text: 'plain', usage: { promptTokens: 3, completionTokens: 1 } })
  })
})

describe('a provider that refuses stream', () => {
  it('auto asks again without, and stops asking that provider to stream', async () => {
    wire.api.refuseStream = true
    wire.api.enqueue(reply.text('first'), reply.text('second'))
    const model = wire.model()
    expect((await model.complete(request())).text).toBe('first')
    expect(wire.api.bodies.map((b) => b.stream === true)).toEqual([true, false])
    // A per-run model override shares what was learned.
    expect((await model.withModel('gpt-other').complete(request())).text).toBe('second')
    expect(wire.api.bodies.map((b) => b.stream === true)).toEqual([true, false, false])
    expect(model.streaming).toBe(false)
  })

  it('on fails the call with the provider error', async () => {
    wire.api.refuseStream = true
    const err = await wire
      .model({ stream: 'on' })
      .complete(request())
      .then(
        () => undefined,
        (e: unknown) => e,
      )
    expect(err).toBeInstanceOf(ModelError)
    expect((err as ModelError).message).toContain('Streaming is not supported for this model.')
    expect(wire.api.bodies).toHaveLength(1)
  })

  it('other 400s are not taken for a refusal to stream', async () => {
    wire.api.enqueue(reply.error(400, "Invalid 'messages[0]': bad."))
    await expect(wire.model().complete(request())).rejects.toBeInstanceOf(ModelError)
    expect(wire.api.bodies).toHaveLength(1)
    expect(wire.model().streaming).toBe(true)
  })
})

describe('a stream cut short', () => {
  it('is a failure after the budget, never a half reply', async () => {
    wire.api.enqueue(reply.text('a long answer that never ends', { stallAfterChunks: 4 }))
    const deltas: string[] = []
    const err = await wire
      .model({ stream: 'on' })
      .complete(request({ timeoutMs: 300, onText: (d) => deltas.push(d) }))
      .then(
        () => undefined,
        (e: unknown) => e,
      )
    expect(err).toBeInstanceOf(ModelError)
    expect((err as ModelError).options.code).toBe('timeout')
    expect(deltas.length).toBeGreaterThan(0)
  })

  it('is the caller’s abort when the run is cancelled mid-stream', async () => {
    wire.api.enqueue(reply.text('a long answer that never ends', { stallAfterChunks: 4 }))
    const cancel = new AbortController()
    const deltas: string[] = []
    const call = wire.model({ stream: 'on' }).complete(
      request({
        signal: cancel.signal,
        onText: (d) => {
          deltas.push(d)
          cancel.abort(new Error('cancelled by test'))
        },
      }),
    )
    await expect(call).rejects.toThrow('cancelled by test')
    expect(deltas).toHaveLength(1)
  })
})
