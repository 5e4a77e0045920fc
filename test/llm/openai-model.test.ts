import { describe, expect, it, vi } from 'vitest'
import { ModelError } from '../../src/errors/model-error'
import type { ChatMessage, ModelRequest, ToolSchema } from '../../src/kernel/model'
import { FAKE_OPENAI_BASE_URL, reply } from '../fakes/fake-openai'
import { settle, useFakeClock, useWire } from '../integration/harness'

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

const PAIRED: ChatMessage[] = [
  { role: 'system', content: 'You are on call.' },
  { role: 'user', content: 'Why is order failing?' },
  {
    role: 'assistant',
    content: 'Checking both.',
    tool_calls: [
      {
        id: 'call_b',
        type: 'function',
        function: { name: 'query_metrics', arguments: '{"service":"order"}' },
      },
      {
        id: 'call_a',
        type: 'function',
        function: { name: 'query_metrics', arguments: '{"service":"gateway"}' },
      },
    ],
  },
  { role: 'tool', tool_call_id: 'call_b', content: 'order error_rate 12%' },
  { role: 'tool', tool_call_id: 'call_a', content: 'gateway error_rate 0.2%' },
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

async function failure(promise: Promise<unknown>): Promise<ModelError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(err).toBeInstanceOf(ModelError)
  return err as ModelError
}

describe('request body', () => {
  it.each([
    ['text', { protocol: 'text' as const, tools: undefined }, false],
    ['text with tools given', { protocol: 'text' as const }, false],
    ['native', { protocol: 'native' as const }, true],
  ])('%s: sends tools only for the native protocol', async (_name, overrides, withTools) => {
    wire.api.enqueue(reply.text('ok'))
    await wire.model().complete(request({ ...overrides, messages: PAIRED }))
    const body = wire.api.lastBody()
    expect(body.model).toBe('gpt-test')
    expect(body.temperature).toBe(0)
    expect(body.messages).toEqual(PAIRED)
    expect('max_tokens' in body).toBe(false)
    if (withTools) {
      expect(body.tools).toEqual(TOOLS)
      expect(body.tool_choice).toBe('auto')
    } else {
      expect('tools' in body).toBe(false)
      expect('tool_choice' in body).toBe(false)
    }
    expect(wire.api.violations).toEqual([])
  })

  it('sends max_tokens and temperature when configured, and the other model after withModel', async () => {
    wire.api.enqueue(reply.text('ok'))
    const other = wire.model({ maxTokens: 256, temperature: 0.7 }).withModel('gpt-other')
    expect(other.name).toBe('api.openai.test/gpt-other')
    await other.complete(request())
    expect(wire.api.lastBody()).toMatchObject({
      model: 'gpt-other',
      max_tokens: 256,
      temperature: 0.7,
    })
  })

  it('uses the fetch given in the options, looked up at call time', async () => {
    const seen: string[] = []
    wire.api.enqueue(reply.text('ok'))
    const model = wire.model({
      fetch: (input, init) => (seen.push(String(input)), fetch(input, init)),
    })
    await model.complete(request())
    expect(seen).toEqual([`${FAKE_OPENAI_BASE_URL}/chat/completions`])
  })

  it('a mispaired tool message is rejected by the fake like the real API (400, not retried)', async () => {
    wire.api.enqueue(reply.text('never'))
    const messages = [PAIRED[0]!, PAIRED[1]!, PAIRED[2]!, PAIRED[4]!, PAIRED[3]!]
    const err = await failure(wire.model().complete(request({ messages })))
    expect(err.options).toMatchObject({ status: 400, code: 'http' })
    expect(err.message).toContain('call_a does not answer the next pending tool call (call_b)')
    expect(wire.api.bodies).toHaveLength(1)
    // The refusal is what this test is about: take it, so the after-test check does not fail.
    expect(wire.api.takeViolations()).toHaveLength(1)
  })
})

describe('response mapping', () => {
  it('maps several tool calls with ids, names and raw argument strings', async () => {
    wire.api.enqueue(
      reply.toolCalls(
        [
          { id: 'call_1', name: 'query_metrics', arguments: '{"service":"order"}' },
          { id: 'call_2', name: 'search_logs', arguments: '{"service": "order", "query": "err' },
        ],
        { content: 'Looking.', usage: { prompt_tokens: 120, completion_tokens: 30 } },
      ),
    )
    const res = await wire.model().complete(request())
    expect(res).toEqual({
      text: 'Looking.',
      toolCalls: [
        {
          id: 'call_1',
          type: 'function',
          function: { name: 'query_metrics', arguments: '{"service":"order"}' },
        },
        {
          id: 'call_2',
          type: 'function',
          function: { name: 'search_logs', arguments: '{"service": "order", "query": "err' },
        },
      ],
      finishReason: 'tool_calls',
      usage: { promptTokens: 120, completionTokens: 30 },
      model: 'gpt-test',
      id: expect.stringMatching(/^chatcmpl-fake-\d+$/),
    })
  })

  it.each([
    ['', ''],
    [null, null],
  ])('keeps empty content %j as %j', async (content, text) => {
    wire.api.enqueue(reply.text(content))
    const res = await wire.model().complete(request())
    expect(res.text).toBe(text)
    expect(res.toolCalls).toBeUndefined()
  })

  it.each([
    ['stop', 'stop'],
    ['length', 'length'],
    ['content_filter', 'content_filter'],
    ['function_call', 'tool_calls'],
    ['something_new', 'stop'],
  ])('finish_reason %s → %s', async (sent, mapped) => {
    wire.api.enqueue(reply.text('x', { finishReason: sent }))
    expect((await wire.model().complete(request())).finishReason).toBe(mapped)
  })

  it('reads the cached prompt tokens when the provider reports them', async () => {
    wire.api.enqueue(
      reply.text('x', {
        usage: {
          prompt_tokens: 1200,
          completion_tokens: 7,
          prompt_tokens_details: { cached_tokens: 1024 },
        },
      }),
      reply.text('y', { usage: { prompt_tokens: 30, completion_tokens: 2 } }),
    )
    const model = wire.model()
    expect((await model.complete(request())).usage).toEqual({
      promptTokens: 1200,
      completionTokens: 7,
      cachedPromptTokens: 1024,
    })
    expect((await model.complete(request())).usage).toEqual({
      promptTokens: 30,
      completionTokens: 2,
    })
  })

  it('has no usage field when the provider reports none', async () => {
    wire.api.enqueue(reply.text('x', { usage: null, model: 'gpt-test-2026' }))
    const res = await wire.model().complete(request())
    expect('usage' in res).toBe(false)
    expect(res.model).toBe('gpt-test-2026')
  })

  it('a response without choices is a bad_response, not retried', async () => {
    wire.api.enqueue(
      reply.raw({ id: 'x', object: 'chat.completion', created: 1, model: 'gpt-test', choices: [] }),
    )
    const err = await failure(wire.model().complete(request()))
    expect(err.options.code).toBe('bad_response')
    expect(err.message).toContain('without choices')
    expect(wire.delays).toEqual([])
  })
})

describe("retries: the openai client's own, bounded by the budget", () => {
  useFakeClock('2026-01-01T00:00:00Z')

  it.each([
    ['Retry-After seconds', { 'retry-after': '2' }, 2000],
    ['retry-after-ms', { 'retry-after-ms': '1500', 'retry-after': '9' }, 1500],
    ['Retry-After HTTP date', { 'retry-after': 'Thu, 01 Jan 2026 00:00:03 GMT' }, 3000],
  ])('429 with %s is honoured', async (_name, headers, wait) => {
    wire.api.enqueue(
      reply.error(429, 'Rate limit reached', headers, { code: 'rate_limit_exceeded' }),
      reply.text('ok'),
    )
    const res = await settle(wire.model().complete(request({ timeoutMs: 60_000 })))
    expect(res.text).toBe('ok')
    expect(wire.delays).toEqual([wait])
    expect(wire.api.bodies).toHaveLength(2)
  })

  it.each([
    ['500', reply.error(500, 'The server had an error')],
    ['503', reply.error(503, 'Overloaded')],
    ['409', reply.error(409, 'Conflict')],
    ['network error', reply.networkError()],
  ])('%s then success: retried after a jittered backoff', async (_name, first) => {
    wire.api.enqueue(first, reply.text('ok'))
    expect((await settle(wire.model().complete(request()))).text).toBe('ok')
    expect(wire.delays).toEqual([437]) // 500 ms × (1 − random 0.5 × 0.25), in whole ms
  })

  it('a timeout then success: each attempt is bounded, the retry answers', async () => {
    wire.api.enqueue(reply.hang(), reply.text('ok'))
    const model = wire.model({ attemptTimeoutMs: 30 })
    const res = await settle(model.complete(request({ timeoutMs: 3_000 })))
    expect(res.text).toBe('ok')
    expect(wire.delays).toEqual([30 + 437])
  })

  it('a hang that uses the whole budget ends with a timeout error, no request after it', async () => {
    wire.api.enqueue(reply.hang(), reply.text('never'))
    const err = await failure(settle(wire.model().complete(request({ timeoutMs: 40 }))))
    expect(err.options.code).toBe('timeout')
    expect(err.message).toContain('no answer within the time budget of 40 ms')
    expect(wire.api.pending).toBe(1)
  })

  it('a permanent failure throws ModelError with status and provider message after maxRetries', async () => {
    wire.api.enqueue(
      ...Array.from({ length: 4 }, () =>
        reply.error(500, 'The server had an error processing your request'),
      ),
    )
    const err = await failure(settle(wire.model().complete(request({ timeoutMs: 60_000 }))))
    expect(err.options).toEqual({ status: 500, code: 'http' })
    expect(err.message).toContain('after 4 attempts')
    expect(err.message).toContain('500')
    expect(err.message).toContain('The server had an error processing your request')
    // Exponential, 12.5 % jitter off (random 0.5): 437.5 (timers count whole ms), 875, 1750 ms.
    expect(wire.delays).toEqual([437, 875, 1750])
  })

  it.each([
    [
      'what fetch threw',
      'Network connection lost.',
      'could not connect: Network connection lost. (check OPENAI_BASE_URL and that the provider is reachable)',
    ],
    [
      // workerd's fetch to a host that does not resolve (test/model-unreachable/ has the real one).
      "workerd's reference for a cause it logs but does not show",
      'internal error; reference = 9fvo9e9hl66g65f4ir8v7nhu',
      'could not connect: internal error; reference = 9fvo9e9hl66g65f4ir8v7nhu (workerd logged the cause under wdErrId = 9fvo9e9hl66g65f4ir8v7nhu, such as a host name that does not resolve; check OPENAI_BASE_URL and that the provider is reachable)',
    ],
  ])('a connection that fails on every attempt says %s', async (_name, thrown, says) => {
    wire.api.enqueue(reply.networkError(thrown), reply.networkError(thrown))
    const err = await failure(settle(wire.model({ maxRetries: 1 }).complete(request())))
    expect(err.options).toEqual({ code: 'network' })
    expect(err.message).toBe(
      `model call to ${new URL(FAKE_OPENAI_BASE_URL).host}/gpt-test failed, after 2 attempts: ${says}`,
    )
  })

  it('backoff is capped at 8 s', async () => {
    vi.mocked(Math.random).mockReturnValue(0)
    wire.api.enqueue(...Array.from({ length: 7 }, () => reply.error(502, 'Bad gateway')))
    await failure(settle(wire.model({ maxRetries: 6 }).complete(request({ timeoutMs: 600_000 }))))
    expect(wire.delays).toEqual([500, 1000, 2000, 4000, 8000, 8000])
  })

  it('never sleeps past the remaining budget: a long Retry-After fails at once', async () => {
    wire.api.enqueue(
      reply.error(
        429,
        'Rate limit reached',
        { 'retry-after': '30' },
        { code: 'rate_limit_exceeded' },
      ),
    )
    const err = await failure(settle(wire.model().complete(request({ timeoutMs: 1_000 }))))
    expect(wire.delays).toEqual([])
    expect(wire.api.bodies).toHaveLength(1)
    expect(err.options).toEqual({ status: 429, code: 'http' })
    expect(err.message).toContain('rate_limit_exceeded')
    expect(err.message).toContain('retry in 30000 ms would exceed the remaining 1000 ms')
  })

  it('nor past it with a backoff: the retry that would not fit is not started', async () => {
    wire.api.enqueue(reply.error(503, 'Overloaded'), reply.error(503, 'Overloaded'))
    // First backoff (at most 500 ms) fits in 1 400 ms; the second (at most 1 000) no longer does.
    const err = await failure(settle(wire.model().complete(request({ timeoutMs: 1_400 }))))
    expect(wire.delays).toEqual([437])
    expect(err.message).toContain('after 2 attempts')
    expect(err.message).toMatch(/retry in 1000 ms would exceed the remaining 963 ms/)
  })

  it.each([
    [400, 'Invalid value for temperature'],
    [401, 'Unauthorized'],
    [404, 'The model `gpt-nope` does not exist'],
    [422, 'Unprocessable'],
  ])('a %i is not retried', async (status, message) => {
    wire.api.enqueue(reply.error(status, message), reply.text('never'))
    const err = await failure(settle(wire.model().complete(request())))
    expect(err.options).toEqual({ status, code: 'http' })
    expect(err.message).toContain(message)
    expect(err.message).not.toContain('would exceed')
    expect(wire.delays).toEqual([])
    expect(wire.api.pending).toBe(1)
  })

  it('x-should-retry: false from the provider is obeyed', async () => {
    wire.api.enqueue(
      reply.error(500, 'Do not retry', { 'x-should-retry': 'false' }),
      reply.text('never'),
    )
    const err = await failure(settle(wire.model().complete(request())))
    expect(err.options).toEqual({ status: 500, code: 'http' })
    expect(wire.api.pending).toBe(1)
  })

  it('a cancelled run stops waiting during a hang and is not retried', async () => {
    wire.api.enqueue(reply.hang(), reply.text('never'))
    const controller = new AbortController()
    const pending = wire.model().complete(request({ signal: controller.signal }))
    setTimeout(() => controller.abort(new Error('run cancelled')), 5)
    await expect(settle(pending)).rejects.toThrow('run cancelled')
    expect(wire.api.pending).toBe(1)
  })

  it('a cancel during the backoff wakes at once; the client then sends nothing', async () => {
    wire.api.enqueue(reply.error(503, 'Overloaded'), reply.text('never'))
    const controller = new AbortController()
    const started = Date.now()
    const waiting = wire.model().complete(request({ signal: controller.signal }))
    setTimeout(() => controller.abort(new Error('cancelled in the backoff')), 100)
    await expect(settle(waiting)).rejects.toThrow('cancelled in the backoff')
    expect(Date.now() - started).toBe(100)
    // The client's own wait (437.5 ms) ends later; it checks the signal and sends nothing.
    await vi.runAllTimersAsync()
    expect(wire.api.bodies).toHaveLength(1)
    expect(wire.api.pending).toBe(1)
  })
})

describe('errors', () => {
  it.each([
    ['an sk- key', 'sk-proj-wrongWRONGwrong0123456789'],
    ['a provider token', 'gsk_live_provider_token_998877'],
  ])('the API key (%s) never appears in the error message', async (_name, key) => {
    // The fake answers 401 "Incorrect API key provided: <key>", echoing what it got.
    const err = await failure(wire.model({ apiKey: key }).complete(request()))
    expect(err.options.status).toBe(401)
    expect(err.message).not.toContain(key)
    expect(err.message).toContain('[redacted]')
    expect(err.message).toContain('check OPENAI_API_KEY')
    expect(wire.api.takeViolations()).toHaveLength(1)
  })

  it('redacts other sk- keys a provider echoes', async () => {
    wire.api.enqueue(reply.error(400, 'key sk-otherkey1234567890 is not valid for org'))
    const err = await failure(wire.model().complete(request()))
    expect(err.message).not.toContain('sk-otherkey')
  })

  it.each([
    [400, 'registry.ollama.ai/library/gemma:2b does not support tools', {}],
    [400, "Unsupported parameter: 'tools' is not supported with this model.", {}],
    [400, 'tool calling is not supported with this model', {}],
    [
      404,
      'No endpoints found that support tool use. To learn more about provider routing, visit ...',
      {},
    ],
    [
      400,
      '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set',
      {},
    ],
    [400, 'Unsupported parameter', { code: 'unsupported_parameter', param: 'tools' }],
  ])('native %i "%s" → tools_unsupported', async (status, message, details) => {
    wire.api.enqueue(reply.error(status, message, {}, details))
    const err = await failure(wire.model().complete(request()))
    expect(err.options).toEqual({ status, code: 'tools_unsupported' })
    expect(err.message).toContain('MODEL_PROTOCOL=text')
  })

  it.each([
    [
      'native, unrelated 400',
      'native' as const,
      "Invalid parameter: messages with role 'tool' must be a response",
    ],
    ['text protocol', 'text' as const, 'llama2 does not support tools'],
  ])('%s is not tools_unsupported', async (_name, protocol, message) => {
    wire.api.enqueue(reply.error(400, message))
    const err = await failure(wire.model().complete(request({ protocol })))
    expect(err.options.code).toBe('http')
  })
})
