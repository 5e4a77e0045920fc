import { describe, expect, it } from 'vitest'
import { toRunResult } from '../../src/kernel/index'
import { OpenAIModel } from '../../src/llm/openai-model'
import { calculator } from '../../tools/calculator'
import { FAKE_OPENAI_BASE_URL, FAKE_OPENAI_KEY, reply } from '../fakes/fake-openai'
import { useWire, runUntilStill, startRun } from './harness'

const wire = useWire()

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

    const out = await runUntilStill(state, deps)

    expect(toRunResult(out.state)).toMatchObject({
      ok: false,
      answer: '',
      stopReason: 'cancelled',
    })
    expect(out.state.steps).toEqual([])
  })

  it('during the backoff between retries → stopReason cancelled, no second request', async () => {
    wire.api.enqueue(reply.error(503, 'overloaded'), reply.text('never'))
    const controller = new AbortController()
    const model = new OpenAIModel({
      baseURL: FAKE_OPENAI_BASE_URL,
      apiKey: FAKE_OPENAI_KEY,
      model: 'gpt-test',
      // The wait never ends by itself: only the cancel can end it.
      sleep: () => {
        controller.abort(new Error('operator cancelled the run'))
        return new Promise<void>(() => {})
      },
    })
    const { state, deps } = startRun(
      [calculator],
      model,
      { protocol: 'native' },
      { signal: controller.signal },
    )

    const out = await runUntilStill(state, deps)

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

    const out = await runUntilStill(state, deps)

    expect(Date.now() - started).toBeLessThan(2_000)
    expect(toRunResult(out.state)).toMatchObject({ ok: false, answer: '', stopReason: 'timeout' })
  })
})
