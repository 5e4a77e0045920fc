import { describe, expect, it } from 'vitest'
import { toRunResult } from '../../src/kernel/index'
import { calculator } from '../../tools/calculator'
import { reply } from '../fakes/fake-openai'
import { useWire, runUntilStill, startRun } from './harness'

const wire = useWire()

const calc = (
  expression: string,
  usage: { prompt_tokens: number; completion_tokens: number } | null,
) => reply.toolCalls([{ name: 'calculator', arguments: { expression } }], { usage })

describe('usage and cost from the provider', () => {
  it('real usage lands in each step (estimated: false); a reply without usage is estimated', async () => {
    wire.api.enqueue(
      calc('1 + 1', { prompt_tokens: 123, completion_tokens: 45 }),
      reply.text('2', { usage: null }),
    )
    const { state, deps } = startRun([calculator], wire.model(), { protocol: 'native' })
    const out = await runUntilStill(state, deps)

    const trace = toRunResult(out.state)
    expect(trace.ok).toBe(true)
    const [real, estimated] = trace.steps
    expect(real).toMatchObject({ promptTokens: 123, completionTokens: 45, estimated: false })
    expect(estimated!.estimated).toBe(true)
    // The estimate is of what was really sent: at least the tools array and the messages.
    const sentChars = JSON.stringify(wire.api.lastBody().messages).length
    expect(estimated!.promptTokens).toBeGreaterThan(sentChars / 8)
    expect(estimated!.completionTokens).toBe(1) // "2"
    expect(real).not.toHaveProperty('costUsd')
    expect(trace.usage).toMatchObject({
      promptTokens: 123 + estimated!.promptTokens,
      completionTokens: 46,
      estimated: true,
      modelCalls: 2,
    })
    expect(trace.usage).not.toHaveProperty('costUsd')
  })

  it('with pricing, each step carries its cost and the run sums them', async () => {
    wire.api.enqueue(
      calc('1 + 1', { prompt_tokens: 1000, completion_tokens: 200 }),
      reply.text('2', { usage: { prompt_tokens: 2000, completion_tokens: 100 } }),
    )
    const { state, deps } = startRun(
      [calculator],
      wire.model(),
      { protocol: 'native' },
      { pricing: { promptPer1K: 0.5, completionPer1K: 2 } },
    )
    const out = await runUntilStill(state, deps)

    const trace = toRunResult(out.state)
    expect(trace.steps.map((s) => s.costUsd)).toEqual([0.5 + 0.4, 1 + 0.2])
    expect(trace.usage.costUsd).toBeCloseTo(2.1, 10)
  })

  it('maxCostUsd stops the run with cost_budget before the next model call', async () => {
    wire.api.enqueue(
      calc('1 + 1', { prompt_tokens: 1000, completion_tokens: 1000 }),
      calc('2 + 2', { prompt_tokens: 1000, completion_tokens: 1000 }),
      calc('3 + 3', { prompt_tokens: 1000, completion_tokens: 1000 }),
    )
    const { state, deps } = startRun(
      [calculator],
      wire.model(),
      { protocol: 'native', budget: { maxCostUsd: 3 } },
      { pricing: { promptPer1K: 1, completionPer1K: 1 } },
    )
    const out = await runUntilStill(state, deps)

    const trace = toRunResult(out.state)
    expect(trace).toMatchObject({ ok: false, answer: '', stopReason: 'cost_budget' })
    expect(trace.error).toContain('$3')
    expect(trace.steps).toHaveLength(2)
    expect(trace.usage.costUsd).toBe(4)
    // $2 after the first step is under the budget; $4 after the second is not: no third call.
    expect(wire.api.bodies).toHaveLength(2)
    expect(wire.api.pending).toBe(1)
  })
})
