import * as z from 'zod/mini'
import { describe, expect, it } from 'vitest'
import {
  advance,
  createRunState,
  defineTool,
  MemoryObservationStore,
  react,
  ToolRegistry,
  type ConfirmHook,
  type RunState,
} from '../../src/kernel/index'
import { nativeAnswer, nativeCall, nativeCalls, ScriptedModel } from '../fakes/scripted-model'

function fixtures() {
  const ran: string[] = []
  const add = defineTool({
    name: 'add',
    description: 'Add two numbers.',
    params: z.object({ a: z.number(), b: z.number() }),
    returns: 'The sum.',
    handler: ({ a, b }) => {
      ran.push('add')
      return { sum: a + b }
    },
  })
  const notify = defineTool({
    name: 'notify',
    description: 'Post a message to the team.',
    params: z.object({ text: z.string() }),
    returns: 'Posted.',
    sideEffect: true,
    handler: ({ text }) => {
      ran.push(`notify:${text}`)
      return 'posted'
    },
  })
  const model = new ScriptedModel([
    nativeCalls([nativeCall('add', { a: 2, b: 3 }, 'c_add')], 'Add first.'),
    nativeCalls([nativeCall('notify', { text: 'sum is 5' }, 'c_notify')]),
    nativeAnswer('2 + 3 = 5, and the team knows.'),
  ])
  return { ran, model, tools: [add, notify] }
}

describe('react()', () => {
  it('runs a task to the end: answer, steps, usage and trace', async () => {
    const { ran, model, tools } = fixtures()
    const states: RunState[] = []
    const result = await react('add 2 and 3, then tell the team', tools, {
      model,
      budget: { maxSteps: 5 },
      confirm: { mode: 'allow' },
      onState: (s) => states.push(s),
    })
    expect(result).toMatchObject({
      ok: true,
      answer: '2 + 3 = 5, and the team knows.',
      stopReason: 'finish',
      phase: 'done',
      protocol: 'native',
      model: 'scripted',
    })
    expect(ran).toEqual(['add', 'notify:sum is 5'])
    expect(result.steps.map((s) => s.calls.map((c) => c.observation))).toEqual([
      ['{"sum":5}'],
      ['posted'],
      [],
    ])
    expect(result.steps[0]!.thought).toBe('Add first.')
    expect(result.usage.modelCalls).toBe(3)
    expect(states.at(-1)!.phase).toBe('done')
    expect(states.length).toBeGreaterThan(3)
  })

  it('without a confirm option, side effects are refused and the model is told', async () => {
    const { ran, model, tools } = fixtures()
    const result = await react('t', tools, { model })
    expect(ran).toEqual(['add'])
    expect(result.steps[1]!.calls[0]!.observation).toMatch(
      /^\[ToolError\] notify has side effects and is not permitted here \(confirm policy "deny"\)/,
    )
  })

  it.each([
    [true, ['add', 'notify:sum is 5'], 'posted'],
    [
      false,
      ['add'],
      '[ToolError] notify was not run: it was denied by confirm hook. Use read-only tools instead, or ask the user for permission.',
    ],
  ])(
    'asks a confirm function (says %s) for each side effect only',
    async (answer, expectedRuns, observation) => {
      const { ran, model, tools } = fixtures()
      const asked: unknown[] = []
      const confirm: ConfirmHook = (call, tool) => {
        asked.push({ call, sideEffect: tool.sideEffect })
        return answer
      }
      const result = await react('t', tools, { model, confirm })
      expect(asked).toEqual([
        { call: { id: 'c_notify', name: 'notify', args: { text: 'sum is 5' } }, sideEffect: true },
      ])
      expect(ran).toEqual(expectedRuns)
      expect(result.steps[1]!.calls[0]!.observation).toBe(observation)
      expect(result.ok).toBe(true)
    },
  )

  it('accepts an async confirm function', async () => {
    const { ran, model, tools } = fixtures()
    const result = await react('t', tools, { model, confirm: async () => true })
    expect(ran).toEqual(['add', 'notify:sum is 5'])
    expect(result.ok).toBe(true)
  })
})

describe('think classifies the calls of the reply it records', () => {
  it('a run cancelled while the model answered asks the confirm hook nothing', async () => {
    const { ran, tools } = fixtures()
    const controller = new AbortController()
    const model = new ScriptedModel(() => {
      controller.abort(new Error('stopped by the user'))
      return nativeCalls([nativeCall('notify', { text: 'too late' }, 'c_late')])
    })
    let asked = 0
    const result = await react('tell the team', tools, {
      model,
      confirm: () => {
        asked++
        return true
      },
      signal: controller.signal,
    })
    expect(result).toMatchObject({ ok: false, stopReason: 'cancelled' })
    expect(result.error).toBe('stopped by the user')
    expect(asked).toBe(0)
    expect(ran).toEqual([])
    // The reply is in the trace, its call never decided and never run.
    expect(result.steps[0]!.calls[0]).toMatchObject({ id: 'c_late', name: 'notify' })
    expect(result.steps[0]!.calls[0]!.approval).toBeUndefined()
    expect(result.usage.modelCalls).toBe(1)
  })

  it('a failure while classifying keeps the reply and its usage, calls pending', async () => {
    const broken = defineTool({
      name: 'deploy',
      description: 'Deploy.',
      params: z.object({ service: z.string() }).check(
        z.refine(() => {
          throw new Error('schema bug')
        }),
      ),
      returns: 'Deployed.',
      sideEffect: true,
      handler: () => 'deployed',
    })
    const state = createRunState({ task: 'deploy api', tools: ['deploy'], policy: { mode: 'ask' } })
    const next = await advance(state, {
      model: new ScriptedModel([nativeCalls([nativeCall('deploy', { service: 'api' }, 'c1')])]),
      registry: new ToolRegistry([broken]),
      observations: new MemoryObservationStore(),
    })
    expect(next.phase).toBe('act')
    expect(next.steps).toHaveLength(1)
    expect(next.steps[0]!.calls[0]).toMatchObject({ id: 'c1', status: 'pending' })
    expect(next.usage.modelCalls).toBe(1)
    expect(state.steps).toHaveLength(0)
  })
})
