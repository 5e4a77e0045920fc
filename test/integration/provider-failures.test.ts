import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { advance, runSlice, toRunResult, type TransitionEvent } from '../../src/kernel/index'
import { calculator } from '../../tools/calculator'
import { FAKE_OPENAI_KEY, reply, type FakeReply } from '../fakes/fake-openai'
import {
  settle,
  useFakeClock,
  useWire,
  runUntilStill,
  startRun,
  UNLIMITED,
  type Wire,
} from './harness'

const wire = useWire()
// The openai client waits on its own timers: on a faked clock they pass at once.
useFakeClock()
let logged: string[]

beforeEach(() => {
  logged = []
  // Everything the run writes to the console, to prove the key never reaches the logs.
  for (const level of ['log', 'info', 'warn', 'error', 'debug'] as const) {
    vi.spyOn(console, level).mockImplementation((...args: unknown[]) => {
      logged.push(args.map((a) => (typeof a === 'string' ? a : safeJson(a))).join(' '))
    })
  }
})
afterEach(() => {
  vi.restoreAllMocks()
})

function safeJson(value: unknown): string {
  try {
    return value instanceof Error ? `${value.name}: ${value.message}` : JSON.stringify(value)
  } catch {
    return String(value)
  }
}

async function runWith(replies: FakeReply[], options: Parameters<Wire['model']>[0] = {}) {
  wire.api.enqueue(...replies)
  const { state, deps } = startRun([calculator], wire.model(options), { protocol: 'native' })
  return settle(runUntilStill(state, deps))
}

describe('transient provider failures are retried inside one step', () => {
  it('429 with Retry-After: waits exactly what the provider asked, then succeeds', async () => {
    const out = await runWith([
      reply.error(429, 'Rate limit reached for gpt-test', { 'retry-after': '7' }),
      reply.text('done'),
    ])
    expect(wire.delays).toEqual([7_000])
    expect(toRunResult(out.state)).toMatchObject({ ok: true, answer: 'done' })
    expect(out.state.usage.modelCalls).toBe(1)
    expect(wire.api.bodies).toHaveLength(2)
    expect(wire.api.bodies[1]).toEqual(wire.api.bodies[0])
  })

  it.each([
    ['500', reply.error(500, 'The server had an error')],
    ['502', reply.error(502, 'Bad gateway')],
    ['a dropped connection', reply.networkError()],
  ])('%s then success: one backoff delay, one step', async (_label, failure) => {
    const out = await runWith([failure, reply.text('done')])
    // The client's first backoff: 500 ms less 12.5 % jitter (random() = 0.5).
    expect(wire.delays).toEqual([437])
    expect(toRunResult(out.state)).toMatchObject({ ok: true, answer: 'done' })
    expect(out.state.steps).toHaveLength(1)
  })

  it('a hang then success: the attempt times out and the retry answers', async () => {
    const out = await runWith([reply.hang(), reply.text('done')], { attemptTimeoutMs: 30 })
    // 30 ms until the attempt is given up, then the backoff.
    expect(wire.delays).toEqual([30 + 437])
    expect(toRunResult(out.state)).toMatchObject({ ok: true, answer: 'done' })
  })
})

describe('permanent provider failure → model_error, and the key stays secret', () => {
  const KEY_IN_MESSAGE = `upstream failed while checking key ${FAKE_OPENAI_KEY}`

  it('5xx after every retry: ok:false, model_error, the provider message redacted', async () => {
    const failures = Array.from({ length: 4 }, () => reply.error(500, KEY_IN_MESSAGE))
    const out = await runWith(failures)

    const trace = toRunResult(out.state)
    expect(trace).toMatchObject({ ok: false, answer: '', stopReason: 'model_error' })
    expect(trace.error).toContain('upstream failed while checking key [redacted]')
    expect(trace.error).toContain('after 4 attempts')
    expect(wire.api.bodies).toHaveLength(4)
    expect(wire.delays).toHaveLength(3)
    expect(JSON.stringify(trace)).not.toContain(FAKE_OPENAI_KEY)
    expect(JSON.stringify(out.state)).not.toContain(FAKE_OPENAI_KEY)
    expect(logged.join('\n')).not.toContain(FAKE_OPENAI_KEY)
  })

  // Found by the simulation (a provider 500 or 429 in random schedules): a run that ended in model_error
  // reported modelCalls 0 although its request had reached the provider.
  it('a call that failed is counted in usage: model_error after one request says modelCalls 1', async () => {
    const out = await runWith([reply.error(400, 'The model produced invalid content')])
    expect(wire.api.bodies).toHaveLength(1)
    expect(toRunResult(out.state)).toMatchObject({ ok: false, stopReason: 'model_error' })
    expect(out.state.usage).toMatchObject({ modelCalls: 1, lostModelCalls: 0, promptTokens: 0 })
  })

  // Found by the simulation too: a call cut off by the run's time budget was not counted either.
  it('a call the time budget cut off is counted like a lost one (its prompt tokens estimated)', async () => {
    wire.api.enqueue(reply.hang())
    const { state, deps } = startRun([calculator], wire.model(), {
      protocol: 'native',
      budget: { maxSeconds: 1 },
    })
    const out = await settle(runUntilStill(state, deps))
    expect(toRunResult(out.state)).toMatchObject({ ok: false, stopReason: 'timeout' })
    expect(out.state.usage).toMatchObject({ modelCalls: 1, lostModelCalls: 1, estimated: true })
    expect(out.state.usage.lostPromptTokens).toBeGreaterThan(0)
  })

  it('a wrong key the provider echoes (401) is not retried and never shown', async () => {
    const wrongKey = 'sk-wrong-key-for-this-test-9876543210'
    const events: TransitionEvent[] = []
    wire.api.enqueue(reply.text('never'))
    const { state, deps } = startRun([calculator], wire.model({ apiKey: wrongKey }), {
      protocol: 'native',
    })
    const out = await settle(runSlice(state, deps, UNLIMITED, (_s, e) => void events.push(e)))

    const trace = toRunResult(out.state)
    expect(trace).toMatchObject({ ok: false, stopReason: 'model_error' })
    expect(trace.error).toContain('Incorrect API key provided: [redacted]')
    expect(trace.error).toContain('check OPENAI_API_KEY')
    expect(wire.delays).toEqual([])
    // The fake really did echo the key: redaction, not luck, keeps it out.
    expect(JSON.stringify(wire.api.takeViolations())).toContain(wrongKey)
    for (const text of [JSON.stringify(trace), JSON.stringify(events), logged.join('\n')]) {
      expect(text).not.toContain(wrongKey)
    }
  })

  it('a hang on every attempt within a short budget ends the run, key-free', async () => {
    wire.api.enqueue(reply.hang(), reply.hang(), reply.hang())
    const { state, deps } = startRun(
      [calculator],
      wire.model({ attemptTimeoutMs: 20, maxRetries: 2 }),
      { protocol: 'native' },
    )
    const next = await settle(advance(state, deps))
    const trace = toRunResult(next)
    expect(trace.ok).toBe(false)
    expect(trace.stopReason).toBe('model_error')
    expect(trace.error).toContain('no answer within 20 ms')
    expect(wire.delays).toHaveLength(2)
    expect(JSON.stringify(trace)).not.toContain(FAKE_OPENAI_KEY)
  })
})

describe('protocol auto: a provider without function calling', () => {
  const NO_TOOLS = reply.error(
    400,
    'tools are not supported for this model',
    {},
    {
      type: 'invalid_request_error',
    },
  )
  const TEXT_FINISH = reply.text(
    '```json\n{"thought": "simple", "action": "finish", "args": {"answer": "4"}}\n```',
  )

  it('falls back to the text protocol and finishes', async () => {
    wire.api.enqueue(NO_TOOLS, TEXT_FINISH)
    const { state, deps } = startRun([calculator], wire.model(), {
      protocol: 'auto',
      task: 'What is 2 + 2?',
    })
    const out = await settle(runUntilStill(state, deps))

    expect(toRunResult(out.state)).toMatchObject({
      ok: true,
      answer: '4',
      protocol: 'text',
      stopReason: 'finish',
    })
    const [native, text] = wire.api.bodies
    expect(wire.api.bodies).toHaveLength(2)
    expect(native).toHaveProperty('tools')
    expect(text).not.toHaveProperty('tools')
    expect(text).not.toHaveProperty('tool_choice')
    expect(text!.messages).toEqual([
      { role: 'system', content: expect.stringContaining('exactly one action') },
      { role: 'user', content: 'Task: What is 2 + 2?' },
    ])
    // The text-protocol system prompt carries the tool specs itself.
    expect(text!.messages[0]!.content).toContain('### calculator')
    expect(text!.messages[0]!.content).toContain('Parameters (JSON Schema)')
    // The text request follows at once: a fallback, not a retry after a wait.
    expect(wire.delays).toEqual([0])
    expect(out.state.usage.modelCalls).toBe(1)
  })

  it('with protocol "native" the same answer is a model_error that says what to set', async () => {
    wire.api.enqueue(NO_TOOLS)
    const { state, deps } = startRun([calculator], wire.model(), { protocol: 'native' })
    const out = await settle(runUntilStill(state, deps))
    expect(toRunResult(out.state)).toMatchObject({
      ok: false,
      stopReason: 'model_error',
      protocol: 'native',
      error: expect.stringContaining('MODEL_PROTOCOL=text'),
    })
  })
})

describe('Retry-After longer than the run has left', () => {
  it('fails at once with the provider message and why it did not wait', async () => {
    wire.api.enqueue(
      reply.error(429, 'Rate limit reached', { 'retry-after': '60' }),
      reply.text('x'),
    )
    const { state, deps } = startRun([calculator], wire.model(), {
      protocol: 'native',
      budget: { maxSeconds: 5 },
    })
    const out = await settle(runUntilStill(state, deps))

    expect(wire.delays).toEqual([])
    expect(wire.api.bodies).toHaveLength(1)
    expect(toRunResult(out.state)).toMatchObject({
      ok: false,
      stopReason: 'model_error',
      error: expect.stringContaining('Rate limit reached'),
    })
    expect(out.state.result!.error).toMatch(/retry in 60000 ms would exceed the remaining \d+ ms/)
  })
})
