import * as z from 'zod/mini'
import { expect, it } from 'vitest'
import { defineTool, react } from '../../src/kernel/index'
import { nativeAnswer, nativeCall, nativeCalls, ScriptedModel } from '../fakes/scripted-model'

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
    ['call_1', 'n=1'],
    ['s1c0', 'n=2'],
  ])
})
