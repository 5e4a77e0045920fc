import { describe, expect, it } from 'vitest'
import { toRunResult } from '../../src/kernel/index'
import { calculator } from '../../tools/calculator'
import { reply } from '../fakes/fake-openai'
import { settle, useFakeClock, useWire, runUntilStill, startRun } from './harness'

const wire = useWire()
useFakeClock()

describe('a run cancelled while the real adapter waits', () => {
  it('during a hanging model call → stopReason cancelled, not model_error', async () => {
    wire.api.enqueue(reply.hang())
    const controller = new AbortController()
    const { state, deps } = startRun(
      [calculator],
      wire.model({ attemptTimeoutMs: 5_000 }),
      { protocol: 'native' },
      { signal: controller.signal },
    )
    setTimeout(() => controller.abort(), 20)

    const out = await settle(runUntilStill(state, deps))

    expect(toRunResult(out.state)).toMatchObject({
      ok: false,
      answer: '',
      stopReason: 'cancelled',
    })
    expect(out.state.steps).toEqual([])
  })

  it('during the backoff between retries → stopReason cancelled at once, no second request', async () => {
    wire.api.enqueue(reply.error(503, 'overloaded'), reply.text('never'))
    const controller = new AbortController()
    const { state, deps } = startRun(
      [calculator],
      wire.model(),
      { protocol: 'native' },
      { signal: controller.signal },
    )
    // The client's backoff is 437 ms; the cancel comes 100 ms into it.
    setTimeout(() => controller.abort(new Error('operator cancelled the run')), 100)
    const started = Date.now()

    const out = await settle(runUntilStill(state, deps))

    expect(Date.now() - started).toBe(100)
    expect(toRunResult(out.state)).toMatchObject({ ok: false, stopReason: 'cancelled' })
    expect(wire.api.bodies).toHaveLength(1)
  })
})

describe('the model call is bounded by the run time budget', () => {
  it('a hang that outlasts maxSeconds ends the run with timeout', async () => {
    wire.api.enqueue(reply.hang(), reply.hang())
    const { state, deps } = startRun([calculator], wire.model(), {
      protocol: 'native',
      budget: { maxSeconds: 0.05 },
    })
    const started = Date.now()

    const out = await settle(runUntilStill(state, deps))

    expect(Date.now() - started).toBeLessThanOrEqual(50)
    expect(toRunResult(out.state)).toMatchObject({ ok: false, answer: '', stopReason: 'timeout' })
  })
})
