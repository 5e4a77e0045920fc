import * as z from 'zod/mini'
import { describe, expect, it } from 'vitest'
import {
  advance,
  createRunState,
  defineTool,
  MemoryObservationStore,
  ModelError,
  react,
  ToolRegistry,
  type ModelResponse,
  type Protocol,
  type RunResult,
} from '../../src/kernel/index'
import {
  fakeClock,
  nativeAnswer,
  nativeCall,
  nativeCalls,
  ScriptedModel,
  textAction,
  textFinish,
} from '../fakes/scripted-model'

const lookup = defineTool({
  name: 'lookup',
  description: 'Look a word up.',
  params: z.object({ q: z.string() }),
  returns: 'The entry.',
  handler: ({ q }) => `entry for ${q}`,
})
const broken = defineTool({
  name: 'broken',
  description: 'Always fails.',
  params: z.object({ q: z.string() }),
  returns: 'Nothing.',
  handler: () => {
    throw new Error('backend down')
  },
})
const tools = [lookup, broken]

/** A turn calling `name` with `{ q }` in the given protocol. */
function act(protocol: Protocol, name: string, q: string, usage?: ModelResponse['usage']) {
  return protocol === 'native'
    ? nativeCalls([nativeCall(name, { q }, `call_${q}`)], null, usage)
    : textAction(name, { q }, `look up ${q}`, usage)
}
const finish = (protocol: Protocol, answer: string, usage?: ModelResponse['usage']) =>
  protocol === 'native' ? nativeAnswer(answer, usage) : textFinish(answer, usage)

/** A model that calls lookup with a new word every turn, forever. */
const endless = (protocol: Protocol, usage?: ModelResponse['usage']) =>
  new ScriptedModel((_req, turn) => act(protocol, 'lookup', `w${turn}`, usage))

function expectFailure(result: RunResult, reason: string) {
  expect(result).toMatchObject({ ok: false, answer: '', stopReason: reason, phase: 'done' })
  expect(result.error).toBeTruthy()
}

const protocols: Protocol[] = ['native', 'text']

describe.each(protocols)('%s protocol: how a run ends', (protocol) => {
  it('finish → ok with the answer', async () => {
    const model = new ScriptedModel([act(protocol, 'lookup', 'cat'), finish(protocol, 'A cat.')])
    const result = await react('what is a cat?', tools, { model, protocol })
    expect(result).toMatchObject({ ok: true, answer: 'A cat.', stopReason: 'finish', protocol })
    expect(result.steps.map((s) => s.kind)).toEqual(['action', 'finish'])
    expect(result.steps[0]!.calls[0]).toMatchObject({
      name: 'lookup',
      args: { q: 'cat' },
      observation: 'entry for cat',
      status: 'done',
      kind: 'ok',
    })
    expect(model.requests).toHaveLength(2)
  })

  it('max_steps', async () => {
    const model = endless(protocol)
    const result = await react('t', tools, { model, protocol, budget: { maxSteps: 3 } })
    expectFailure(result, 'max_steps')
    expect(result.steps).toHaveLength(3)
    expect(model.requests).toHaveLength(3)
  })

  it('token_budget before the first call, from the estimate', async () => {
    const model = endless(protocol)
    const result = await react('t', tools, { model, protocol, budget: { maxPromptTokens: 20 } })
    expectFailure(result, 'token_budget')
    expect(model.requests).toHaveLength(0)
  })

  it('token_budget after the real usage reported', async () => {
    const model = endless(protocol, { promptTokens: 4999, completionTokens: 10 })
    const result = await react('t', tools, { model, protocol, budget: { maxPromptTokens: 5000 } })
    expectFailure(result, 'token_budget')
    expect(model.requests).toHaveLength(1)
    expect(result.usage).toMatchObject({
      promptTokens: 4999,
      completionTokens: 10,
      estimated: false,
    })
  })

  it('cost_budget with pricing', async () => {
    const model = endless(protocol, { promptTokens: 1000, completionTokens: 500 })
    const result = await react('t', tools, {
      model,
      protocol,
      budget: { maxCostUsd: 3 },
      pricing: { promptPer1K: 1, completionPer1K: 2 },
    })
    expectFailure(result, 'cost_budget')
    expect(model.requests).toHaveLength(2)
    expect(result.steps.map((s) => s.costUsd)).toEqual([2, 2])
    expect(result.usage.costUsd).toBe(4)
  })

  it('timeout: active time passes maxSeconds (fake clock)', async () => {
    const clock = fakeClock()
    const model = new ScriptedModel((_req, turn) => {
      clock.advance(40_000)
      return act(protocol, 'lookup', `w${turn}`)
    })
    const result = await react('t', tools, {
      model,
      protocol,
      now: clock.now,
      budget: { maxSeconds: 100 },
    })
    expectFailure(result, 'timeout')
    expect(model.requests).toHaveLength(3)
    expect(result.usage.activeMs).toBe(120_000)
    // Each model call may use only what is left of the budget.
    expect(model.requests.map((r) => r.timeoutMs)).toEqual([100_000, 60_000, 20_000])
  })

  it('timeout: the model call used up the rest of the budget', async () => {
    const clock = fakeClock()
    const model = new ScriptedModel(() => {
      clock.advance(100_000)
      return new ModelError('request timed out', { code: 'timeout' })
    })
    const result = await react('t', tools, {
      model,
      protocol,
      now: clock.now,
      budget: { maxSeconds: 100 },
    })
    expectFailure(result, 'timeout')
  })

  it('tool_error_exhausted', async () => {
    const model = new ScriptedModel((_req, turn) => act(protocol, 'broken', `w${turn}`))
    const result = await react('t', tools, { model, protocol, budget: { maxConsecutiveErrors: 2 } })
    expectFailure(result, 'tool_error_exhausted')
    expect(result.steps).toHaveLength(2)
    expect(result.error).toContain('[ToolError] broken failed: Error: backend down')
  })

  it('cancelled through the AbortSignal during a model call', async () => {
    const controller = new AbortController()
    const model = new ScriptedModel((req, turn) => {
      expect(req.signal).toBe(controller.signal)
      controller.abort()
      return act(protocol, 'lookup', `w${turn}`)
    })
    const result = await react('t', tools, { model, protocol, signal: controller.signal })
    expectFailure(result, 'cancelled')
    expect(model.requests).toHaveLength(1)
  })

  it('cancelled through cancelRequested in the state', async () => {
    const model = endless(protocol)
    const state = {
      ...createRunState({ task: 't', tools: ['lookup'], protocol }),
      cancelRequested: true,
    }
    const next = await advance(state, {
      model,
      registry: new ToolRegistry(tools),
      observations: new MemoryObservationStore(),
    })
    expect(next.phase).toBe('done')
    expect(next.result).toMatchObject({ ok: false, answer: '', stopReason: 'cancelled' })
    expect(model.requests).toHaveLength(0)
  })

  it('model_error when the model throws', async () => {
    const model = new ScriptedModel([
      new ModelError('HTTP 500 from api.model.test', { status: 500, code: 'http' }),
    ])
    const result = await react('t', tools, { model, protocol })
    expectFailure(result, 'model_error')
    expect(result.error).toBe('ModelError: HTTP 500 from api.model.test')
  })

  it('content_filter, even with text that looks like an answer', async () => {
    const model = new ScriptedModel([
      { ...finish(protocol, 'half an answer'), finishReason: 'content_filter' },
    ])
    const result = await react('t', tools, { model, protocol })
    expectFailure(result, 'content_filter')
  })

  it('a reply cut off at the length limit is a format error, never success', async () => {
    const model = new ScriptedModel([
      { ...finish(protocol, 'The answer is 4'), finishReason: 'length' },
      finish(protocol, 'The answer is 42.'),
    ])
    const result = await react('t', tools, { model, protocol })
    expect(result).toMatchObject({ ok: true, answer: 'The answer is 42.' })
    expect(result.steps[0]).toMatchObject({ kind: 'format_error', finishReason: 'length' })
    expect(result.steps[0]!.formatError).toMatch(/^\[FormatError\] your reply was cut off/)
  })

  it('prefers real usage over the estimate, and says when it estimated', async () => {
    const model = new ScriptedModel([
      act(protocol, 'lookup', 'a', { promptTokens: 777, completionTokens: 33 }),
      finish(protocol, 'done'),
    ])
    const result = await react('t', tools, { model, protocol })
    expect(result.steps[0]).toMatchObject({
      promptTokens: 777,
      completionTokens: 33,
      estimated: false,
    })
    expect(result.steps[1]!.estimated).toBe(true)
    expect(result.steps[1]!.promptTokens).toBeGreaterThan(0)
    expect(result.steps[1]!.promptTokens).not.toBe(777)
    expect(result.usage).toMatchObject({
      promptTokens: 777 + result.steps[1]!.promptTokens,
      estimated: true,
      modelCalls: 2,
    })
  })

  it('the trace survives JSON', async () => {
    const model = new ScriptedModel([act(protocol, 'lookup', 'cat'), finish(protocol, 'A cat.')])
    const result = await react('t', tools, { model, protocol })
    expect(JSON.parse(JSON.stringify(result))).toEqual(result)
  })
})

describe('unparsable output', () => {
  it('text: [FormatError] with the expected format, then unparsable_exhausted', async () => {
    const model = new ScriptedModel(() => ({ text: 'I would rather chat.', finishReason: 'stop' }))
    const result = await react('t', tools, { model, protocol: 'text' })
    expectFailure(result, 'unparsable_exhausted')
    expect(model.requests).toHaveLength(3)
    const told = model.requests[1]!.messages.at(-1)!
    expect(told.role).toBe('user')
    expect(told.content).toMatch(/^\[FormatError\] no action could be read from your reply\.\n/)
    expect(told.content).toContain('{"thought": "<your reasoning>", "action": "<tool name>"')
    expect(model.requests[1]!.messages.at(-2)).toEqual({
      role: 'assistant',
      content: 'I would rather chat.',
    })
  })

  it('native: an empty reply is a format error, then unparsable_exhausted', async () => {
    const model = new ScriptedModel(() => ({ text: '', finishReason: 'stop' }))
    const result = await react('t', tools, { model, protocol: 'native' })
    expectFailure(result, 'unparsable_exhausted')
    expect(model.requests[1]!.messages.at(-1)!.content).toBe(
      '[FormatError] your reply had no text and no tool call. Call one of the tools, or reply with the final answer as plain text.',
    )
  })

  it('text: finish without an answer is a format error', async () => {
    const model = new ScriptedModel([textAction('finish', {}), textFinish('ok')])
    const result = await react('t', tools, { model, protocol: 'text' })
    expect(result.ok).toBe(true)
    expect(result.steps[0]!.formatError).toMatch(/finish needs a non-empty "answer" string/)
  })
})

describe('error streaks', () => {
  it('a successful step resets the tool error streak', async () => {
    const model = new ScriptedModel([
      act('native', 'broken', 'a'),
      act('native', 'lookup', 'b'),
      act('native', 'broken', 'c'),
      nativeAnswer('made it'),
    ])
    const result = await react('t', tools, { model, budget: { maxConsecutiveErrors: 2 } })
    expect(result).toMatchObject({ ok: true, answer: 'made it' })
  })

  it('a good step resets the format error streak', async () => {
    const junk: ModelResponse = { text: 'hmm', finishReason: 'stop' }
    const model = new ScriptedModel([junk, act('text', 'lookup', 'a'), junk, textFinish('fine')])
    const result = await react('t', tools, {
      model,
      protocol: 'text',
      budget: { maxConsecutiveErrors: 2 },
    })
    expect(result).toMatchObject({ ok: true, answer: 'fine' })
  })
})

describe('loop guard', () => {
  const counted = () => {
    const seen: unknown[] = []
    const tool = defineTool({
      name: 'lookup',
      description: 'Look a word up.',
      params: z.object({ q: z.string(), lang: z.optional(z.string()) }),
      returns: 'The entry.',
      handler: (args) => {
        seen.push(args)
        return `entry for ${args.q}`
      },
    })
    return { seen, tool }
  }

  it('the same call with its keys in another order is refused within the window', async () => {
    const { seen, tool } = counted()
    const model = new ScriptedModel([
      nativeCalls([nativeCall('lookup', '{"q":"cat","lang":"en"}', 'a')]),
      nativeCalls([nativeCall('lookup', '{"lang":"en","q":"cat"}', 'b')]),
      nativeAnswer('A cat.'),
    ])
    const result = await react('t', [tool], { model })
    expect(result.ok).toBe(true)
    expect(seen).toHaveLength(1)
    expect(result.steps[1]!.calls[0]).toMatchObject({ kind: 'loop_guard' })
    expect(result.steps[1]!.calls[0]!.observation).toMatch(
      /^\[LoopGuard\] lookup was already called with these exact arguments in the last 3 steps/,
    )
  })

  it('the same call twice in one turn is refused the second time', async () => {
    const { seen, tool } = counted()
    const model = new ScriptedModel([
      nativeCalls([
        nativeCall('lookup', { q: 'cat' }, 'a'),
        nativeCall('lookup', { q: 'cat' }, 'b'),
      ]),
      nativeAnswer('A cat.'),
    ])
    const result = await react('t', [tool], { model })
    expect(seen).toHaveLength(1)
    expect(result.steps[0]!.calls.map((c) => c.kind)).toEqual(['ok', 'loop_guard'])
  })

  it('outside the window the call runs again', async () => {
    const { seen, tool } = counted()
    const model = new ScriptedModel([
      nativeCalls([nativeCall('lookup', { q: 'cat' }, 'a')]),
      nativeCalls([nativeCall('lookup', { q: 'dog' }, 'b')]),
      nativeCalls([nativeCall('lookup', { q: 'cat' }, 'c')]),
      nativeAnswer('done'),
    ])
    const result = await react('t', [tool], { model, budget: { loopGuardWindow: 1 } })
    expect(result.ok).toBe(true)
    expect(seen).toEqual([{ q: 'cat' }, { q: 'dog' }, { q: 'cat' }])
  })

  it.each([
    [2, 'loop_guard'],
    [3, 'ok'],
  ])('with a window of 2, the call repeated at step %i: %s', async (at, kind) => {
    const { tool } = counted()
    const fillers = Array.from({ length: at - 1 }, (_, i) =>
      nativeCalls([nativeCall('lookup', { q: `word ${i}` }, `f${i}`)]),
    )
    const model = new ScriptedModel([
      nativeCalls([nativeCall('lookup', { q: 'cat' }, 'a')]),
      ...fillers,
      nativeCalls([nativeCall('lookup', { q: 'cat' }, 'again')]),
      nativeAnswer('done'),
    ])
    const result = await react('t', [tool], { model, budget: { loopGuardWindow: 2 } })
    expect(result.steps[at]!.calls[0]).toMatchObject({ id: 'again', kind })
  })

  it('in one turn, each call is compared with every call before it', async () => {
    const { seen, tool } = counted()
    const model = new ScriptedModel([
      nativeCalls([nativeCall('lookup', { q: 'dog' }, 'a')]),
      nativeCalls([
        nativeCall('lookup', { q: 'cat' }, 'b'),
        nativeCall('lookup', { q: 'dog' }, 'c'),
        nativeCall('lookup', { q: 'cat' }, 'd'),
        nativeCall('lookup', { lang: 'en', q: 'cat' }, 'e'),
      ]),
      nativeAnswer('done'),
    ])
    const result = await react('t', [tool], { model })
    expect(result.steps[1]!.calls.map((c) => c.kind)).toEqual([
      'ok',
      'loop_guard',
      'loop_guard',
      'ok',
    ])
    expect(seen).toEqual([{ q: 'dog' }, { q: 'cat' }, { lang: 'en', q: 'cat' }])
  })
})
