import * as z from 'zod/mini'
import { describe, expect, it } from 'vitest'
import { react, type ModelResponse } from '../../src/kernel/index'
import { nativeAnswer, ScriptedModel, textFinish } from '../fakes/scripted-model'
import { recordingTool, type Ran } from './harness'

const text = (t: string): ModelResponse => ({ text: t, finishReason: 'stop' })

function tool(ran: Ran, name: string, param: string, sideEffect = false) {
  return recordingTool(ran, {
    name,
    description: `The ${name} tool.`,
    params: z.object({ [param]: z.string() }),
    returns: 'Text.',
    sideEffect,
    answer: (args) => `${name} got ${JSON.stringify(args)}`,
  })
}

describe('a tool named like the finish', () => {
  it.each(['final_answer', 'finish', 'answer'])(
    'an offered %s tool runs; the run goes on until the kernel finish',
    async (name) => {
      const ran: Ran = []
      const model = new ScriptedModel([
        text(`{"action": "${name}", "args": {"text": "draft"}}`),
        text('Thought: the tool took it\nFinal Answer: done'),
      ])
      const result = await react('task', [tool(ran, name, 'text')], { model, protocol: 'text' })
      expect(ran).toEqual([{ name, args: { text: 'draft' }, callId: 's0c0' }])
      expect(result).toMatchObject({ ok: true, answer: 'done' })
      expect(result.steps).toHaveLength(2)
    },
  )

  it('tells a text-protocol model with a finish tool how to finish instead', async () => {
    const ran: Ran = []
    const model = new ScriptedModel([text('Final Answer: ok')])
    await react('task', [tool(ran, 'finish', 'text')], { model, protocol: 'text' })
    expect(model.requests[0]!.messages[0]!.content).toContain(
      'Here `finish` is one of the tools: the action "finish" calls it.',
    )
  })

  it('without such a tool, final_answer is the finish', async () => {
    const ran: Ran = []
    const model = new ScriptedModel([
      text('{"name": "final_answer", "arguments": {"answer": "42"}}'),
    ])
    const result = await react('task', [tool(ran, 'search', 'q')], { model, protocol: 'text' })
    expect(result).toMatchObject({ ok: true, answer: '42' })
    expect(ran).toEqual([])
  })
})

describe("Llama 3.1's code interpreter", () => {
  const code = 'import sys\n\nprint("Python version: ", sys.version)'

  it('runs the code with the offered code tool, as written', async () => {
    const ran: Ran = []
    const model = new ScriptedModel([text(`<|python_tag|>${code}<|eom_id|>`), textFinish('3.12')])
    const result = await react('python version?', [tool(ran, 'code_interpreter', 'code')], {
      model,
      protocol: 'text',
    })
    expect(ran).toEqual([{ name: 'code_interpreter', args: { code }, callId: 's0c0' }])
    expect(result).toMatchObject({ ok: true, answer: '3.12' })
  })

  it('is a format error that says why when no tool runs code', async () => {
    const ran: Ran = []
    const model = new ScriptedModel([text(`<|python_tag|>${code}<|eom_id|>`), textFinish('x')])
    const result = await react('python version?', [tool(ran, 'search', 'q')], {
      model,
      protocol: 'text',
    })
    expect(ran).toEqual([])
    expect(result.steps[0]).toMatchObject({ kind: 'format_error' })
    const second = model.requests[1]!.messages.at(-1)!.content
    expect(second).toContain('[FormatError] your reply holds code after <|python_tag|>')
  })

  it('is a format error in the native protocol too, not the final answer', async () => {
    const ran: Ran = []
    const model = new ScriptedModel([
      text(`<|python_tag|>${code}<|eom_id|>`),
      nativeAnswer('Python 3.12'),
    ])
    const result = await react('python version?', [tool(ran, 'search', 'q')], {
      model,
      protocol: 'native',
    })
    expect(result).toMatchObject({ ok: true, answer: 'Python 3.12' })
    expect(result.steps[0]).toMatchObject({ kind: 'format_error' })
  })
})

describe('inline and paper-style ReAct actions', () => {
  it('reads `Thought: … Action: name({…})` on one line, the thought without the label', async () => {
    const ran: Ran = []
    const model = new ScriptedModel([
      text('Thought: I need the weather for Shanghai. Action: get_weather({"city": "Shanghai"})'),
      textFinish('sunny'),
    ])
    const result = await react('weather?', [tool(ran, 'get_weather', 'city')], {
      model,
      protocol: 'text',
    })
    expect(ran).toEqual([{ name: 'get_weather', args: { city: 'Shanghai' }, callId: 's0c0' }])
    expect(result.steps[0]).toMatchObject({ thought: 'I need the weather for Shanghai.' })
  })

  it('reads `Act 1: Search[x]` into the tool of that name and its only string parameter', async () => {
    const ran: Ran = []
    const model = new ScriptedModel([
      text('Thought 1: I need to search Apple Remote.\nAct 1: Search[Apple Remote]'),
      text('Thought 2: found it.\nAct 2: Finish[Front Row]'),
    ])
    const result = await react('q', [tool(ran, 'search', 'query')], { model, protocol: 'text' })
    expect(ran).toEqual([{ name: 'search', args: { query: 'Apple Remote' }, callId: 's0c0' }])
    expect(result).toMatchObject({ ok: true, answer: 'Front Row' })
  })
})

describe('arguments under two keys', () => {
  it('uses the filled one, and a side effect still needs exact JSON', async () => {
    const ran: Ran = []
    const model = new ScriptedModel([
      text('{"name": "deploy", "args": {}, "arguments": {"service": "api"}}'),
      text("{'name': 'deploy', 'args': {}, 'arguments': {'service': 'web'}}"),
      textFinish('done'),
    ])
    const result = await react('ship', [tool(ran, 'deploy', 'service', true)], {
      model,
      protocol: 'text',
      confirm: () => true,
    })
    expect(ran).toEqual([{ name: 'deploy', args: { service: 'api' }, callId: 's0c0' }])
    expect(result.steps[1]!.calls[0]).toMatchObject({ name: 'deploy', args: { service: 'web' } })
    expect(result.steps[1]!.calls[0]!.kind).not.toBe('ok')
  })
})
