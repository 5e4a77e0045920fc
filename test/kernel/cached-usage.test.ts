/** Cached prompt tokens in the trace, and cost at the cached price when one is set. */
import * as z from 'zod/mini'
import { describe, expect, it } from 'vitest'
import {
  createRunState,
  defineTool,
  runSlice,
  toRunResult,
  type Pricing,
} from '../../src/kernel/index'
import {
  fakeClock,
  nativeAnswer,
  nativeCall,
  nativeCalls,
  ScriptedModel,
} from '../fakes/scripted-model'
import { sliceDeps, UNLIMITED } from './harness'

const lookup = defineTool({
  name: 'lookup',
  description: 'Looks up.',
  params: z.object({ q: z.string() }),
  returns: 'A value.',
  handler: () => 'found',
})

async function trace(pricing: Pricing) {
  const model = new ScriptedModel([
    nativeCalls([nativeCall('lookup', { q: 'a' })], null, {
      promptTokens: 1000,
      completionTokens: 100,
      cachedPromptTokens: 800,
    }),
    nativeAnswer('done', { promptTokens: 1100, completionTokens: 10 }),
  ])
  const deps = { ...sliceDeps(model, [lookup], fakeClock().now), pricing }
  const state = createRunState({ task: 't', tools: ['lookup'], protocol: 'native' })
  return toRunResult((await runSlice(state, deps, UNLIMITED)).state)
}

describe('cached prompt tokens', () => {
  it('are recorded per step when reported, summed in usage, and priced at the cached price', async () => {
    const t = await trace({ promptPer1K: 1, completionPer1K: 2, cachedPromptPer1K: 0.1 })
    expect(t.steps[0]!.cachedPromptTokens).toBe(800)
    expect('cachedPromptTokens' in t.steps[1]!).toBe(false)
    expect(t.usage.cachedPromptTokens).toBe(800)
    // (200 uncached × 1 + 800 cached × 0.1 + 100 × 2) / 1000, then (1100 + 20) / 1000.
    expect(t.steps[0]!.costUsd).toBeCloseTo(0.48, 10)
    expect(t.steps[1]!.costUsd).toBeCloseTo(1.12, 10)
    expect(t.usage.costUsd).toBeCloseTo(1.6, 10)
  })

  it('without a cached price they cost the prompt price', async () => {
    const t = await trace({ promptPer1K: 1, completionPer1K: 2 })
    expect(t.steps[0]!.costUsd).toBeCloseTo(1.2, 10)
    expect(t.usage.cachedPromptTokens).toBe(800)
  })
})
