import * as z from 'zod/mini'
import { expect, it } from 'vitest'
import { defineTool, react } from '../../src/kernel/index'
import type { ModelRequest } from '../../src/kernel/model'
import { nativeAnswer, nativeCall, nativeCalls, ScriptedModel } from '../fakes/scripted-model'

const BIG = Array.from({ length: 400 }, (_, i) => `row ${i};`).join(' ')

const dump = defineTool({
  name: 'dump',
  description: 'Returns a long text.',
  params: z.object({}),
  returns: 'text',
  handler: () => BIG,
})

/** Follows "continue with offset N" notes until the end, like a careful model. */
function follower(request: ModelRequest, turn: number) {
  if (turn === 0) return nativeCalls([nativeCall('dump', {}, 'c0')])
  const last = request.messages.at(-1)
  const text = last && 'content' in last ? (last.content ?? '') : ''
  if (text.includes('[end of observation]')) return nativeAnswer('read it all')
  const next = /continue with offset (\d+)/.exec(text)
  const offset = next ? Number(next[1]) : 0
  return nativeCalls([
    nativeCall('read_observation', { handle: 'obs_c0', offset, length: 4000 }, `r${turn}`),
  ])
}

it.each([120, 300, 600])(
  'slices fit a %i-token observation limit: never truncated again, nothing missing',
  async (limit) => {
    const result = await react('read', [dump], {
      model: new ScriptedModel(follower),
      budget: { maxObservationTokens: limit, maxSteps: 200, loopGuardWindow: 0 },
    })
    expect(result.ok).toBe(true)
    expect(result.steps[0]!.calls[0]!.truncated).toBe(true)
    const reads = result.steps.slice(1).flatMap((s) => s.calls)
    expect(reads.length).toBeGreaterThan(0)
    for (const c of reads) expect(c.truncated).toBe(false)
    const text = reads
      .map((c) =>
        c.observation.slice(c.observation.indexOf(']\n') + 2, c.observation.lastIndexOf('\n[')),
      )
      .join('')
    expect(text).toBe(BIG)
  },
)
