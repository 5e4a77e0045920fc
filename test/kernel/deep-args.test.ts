import * as z from 'zod/mini'
import { describe, expect, it } from 'vitest'
import { defineTool, react } from '../../src/kernel/index'
import { MAX_JSON_DEPTH } from '../../src/validation/json-walk'
import { nativeAnswer, nativeCall, nativeCalls, ScriptedModel } from '../fakes/scripted-model'

/** `{"v": [[…]]}`: an object holding arrays, `depth` levels in all. */
const nested = (depth: number) => `{"v":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`

async function observationOf(rawArgs: string): Promise<string> {
  const echo = defineTool({
    name: 'echo',
    description: 'Echo the value.',
    params: z.object({ v: z.unknown() }),
    returns: 'The value.',
    handler: ({ v }) => ({ v }),
  })
  const model = new ScriptedModel([
    nativeCalls([nativeCall('echo', rawArgs, 'c1')]),
    nativeAnswer('done'),
  ])
  const result = await react('echo it', [echo], { model })
  return result.steps[0]!.calls[0]!.observation!
}

describe('tool arguments nested deep, read from a native reply', () => {
  it.each([1, 2, MAX_JSON_DEPTH - 1, MAX_JSON_DEPTH])('%i levels: the call runs', async (d) => {
    expect(await observationOf(nested(d))).not.toMatch(/deeper than/)
  })

  it.each([MAX_JSON_DEPTH + 1, MAX_JSON_DEPTH + 2, 500])('%i levels: refused', async (d) => {
    expect(await observationOf(nested(d))).toMatch(
      `deeper than ${MAX_JSON_DEPTH} levels of objects and arrays`,
    )
  })

  it('arguments a repair reads from short text run (no walk needed below the limit)', async () => {
    // Single quotes: repaired, read from fewer characters than the depth limit.
    const raw = "{'v': [[1]]}"
    expect(raw.length).toBeLessThan(MAX_JSON_DEPTH)
    expect(await observationOf(raw)).toBe('{"v":[[1]]}')
  })
})
