import * as z from 'zod/mini'
import { describe, expect, it } from 'vitest'
import { defineTool, KernelUsageError, react } from '../../src/kernel/index'
import { ScriptedModel, textAction, textFinish } from '../fakes/scripted-model'

// The in-memory API says what is wrong.
const lookup = defineTool({
  name: 'lookup',
  description: 'Look a word up.',
  params: z.object({ q: z.string() }),
  returns: 'The entry.',
  handler: ({ q }) => `entry for ${q}`,
})

const weather = defineTool({
  name: '查询天气',
  description: '查询一个城市的天气。',
  params: z.object({ 城市: z.string() }),
  returns: '天气。',
  handler: (args) => `${args.城市}: 晴`,
})

describe('react() options', () => {
  it.each([
    [{ maxSteps: 0 }, /^react\(\): invalid budget: budget\.maxSteps: .*1/],
    [{ maxSteps: 2.5 }, /budget\.maxSteps: /],
    [{ maxConsecutiveErrors: 1000 }, /budget\.maxConsecutiveErrors: .*100/],
    [{ maxStep: 5 }, /budget: unknown argument maxStep/],
    [{ maxSeconds: '60' }, /budget\.maxSeconds: /],
  ])('refuses budget %j, naming the field', async (budget, message) => {
    const model = new ScriptedModel([textFinish('x')])
    const run = react('t', [lookup], { model, budget: budget as never })
    await expect(run).rejects.toThrow(KernelUsageError)
    await expect(run).rejects.toThrow(message)
    expect(model.requests).toHaveLength(0)
  })

  it('refuses a protocol it does not know', async () => {
    const model = new ScriptedModel([textFinish('x')])
    await expect(react('t', [lookup], { model, protocol: 'json' as never })).rejects.toThrow(
      /protocol must be "auto", "text" or "native", got "json"/,
    )
  })

  it('runs a scripted text-protocol model under the default protocol (auto: native first)', async () => {
    // Its replies hold no tool_calls; the JSON actions in their text are read as the calls.
    const model = new ScriptedModel([textAction('lookup', { q: 'cat' }), textFinish('a cat')])
    const result = await react('What is a cat?', [lookup], { model })
    expect(result).toMatchObject({ ok: true, answer: 'a cat', protocol: 'native' })
    expect(result.steps[0]!.calls[0]).toMatchObject({
      name: 'lookup',
      observation: 'entry for cat',
      fromText: 'json',
    })
    expect(model.requests[0]!.tools).toBeDefined()
  })

  it('takes Unicode tool names in the text protocol', async () => {
    const model = new ScriptedModel([
      textAction('查询天气', { 城市: '北京' }),
      textFinish('北京晴'),
    ])
    const result = await react('北京天气？', [weather], { model, protocol: 'text' })
    expect(result).toMatchObject({ ok: true, answer: '北京晴' })
    expect(result.steps[0]!.calls[0]).toMatchObject({ name: '查询天气', observation: '北京: 晴' })
  })

  it.each(['native', 'auto', undefined] as const)(
    'refuses a name the chat-completions API would refuse for protocol %s, before any call',
    async (protocol) => {
      const model = new ScriptedModel([textFinish('x')])
      const run = react('t', [weather, lookup], { model, ...(protocol ? { protocol } : {}) })
      await expect(run).rejects.toThrow(KernelUsageError)
      await expect(run).rejects.toThrow(/tool "查询天气": .*protocol "text"/)
      expect(model.requests).toHaveLength(0)
    },
  )
})
