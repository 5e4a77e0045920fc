import * as z from 'zod/mini'
import { expect, it } from 'vitest'
import { defineTool, MAX_CALLS_PER_STEP, react } from '../../src/kernel/index'
import {
  framed,
  nativeAnswer,
  nativeCall,
  nativeCalls,
  ScriptedModel,
} from '../fakes/scripted-model'

const echo = defineTool({
  name: 'echo',
  description: 'Echoes n.',
  params: z.object({ n: z.number() }),
  returns: 'n',
  handler: ({ n }) => `n=${n}`,
})

it('a call id the provider repeats in a later step is made unique for the run', async () => {
  const model = new ScriptedModel([
    nativeCalls([nativeCall('echo', { n: 1 }, 'call_1')]),
    nativeCalls([nativeCall('echo', { n: 2 }, 'call_1')]),
    nativeAnswer('done'),
  ])
  const result = await react('t', [echo], { model, budget: { loopGuardWindow: 0 } })
  expect(result.ok).toBe(true)
  const ids = result.steps.flatMap((s) => s.calls.map((c) => c.id))
  expect(ids).toEqual(['call_1', 's1c0'])
  // The last request pairs each result with its own call.
  const last = model.requests.at(-1)!.messages
  const pairs = last.flatMap((m) => (m.role === 'tool' ? [[m.tool_call_id, m.content]] : []))
  expect(pairs).toEqual([
    ['call_1', framed('echo', 'n=1')],
    ['s1c0', framed('echo', 'n=2')],
  ])
})

it('runs at most MAX_CALLS_PER_STEP calls of one turn and answers the rest with a [ToolError]', async () => {
  const calls = Array.from({ length: MAX_CALLS_PER_STEP + 2 }, (_, n) =>
    nativeCall('echo', { n }, `c${n}`),
  )
  const model = new ScriptedModel([nativeCalls(calls), nativeAnswer('done')])
  const result = await react('t', [echo], { model, budget: { loopGuardWindow: 0 } })
  const observations = result.steps[0]!.calls.map((c) => c.observation)
  expect(observations.slice(0, MAX_CALLS_PER_STEP)).toEqual(
    Array.from({ length: MAX_CALLS_PER_STEP }, (_, n) => `n=${n}`),
  )
  for (const extra of observations.slice(MAX_CALLS_PER_STEP)) {
    expect(extra).toMatch(/^\[ToolError\] echo: too many calls in one turn \(at most 16\)/)
  }
})
