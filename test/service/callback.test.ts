/** The signed callback: delivered once the run ends, retried with backoff. */
import { describe, expect, it } from 'vitest'
import type { RunResult } from '../../src/kernel/trace'
import { reply } from '../fakes/fake-openai'
import {
  drainAlarms,
  getRun,
  RECEIVER,
  runAlarm,
  startRun,
  WEBHOOK_SECRET,
  useServiceFakes,
  hmacHex,
} from './harness'

const fakes = useServiceFakes()

const CALLBACK = `https://${RECEIVER}/hooks/edgeloop`

describe('callback_url', () => {
  it('POSTs the RunResult, signed with WEBHOOK_SECRET under the callback scheme, once', async () => {
    fakes.ai.enqueue(reply.text('All good.'))
    const id = await startRun({ task: 'Check', tools: ['calculator'], callback_url: CALLBACK })
    await drainAlarms(id)

    expect(fakes.receiver.hits).toHaveLength(1)
    const hit = fakes.receiver.hits[0]!
    expect(hit.path).toBe('/hooks/edgeloop')
    expect(hit.headers.get('content-type')).toBe('application/json')
    expect(hit.headers.get('x-edgeloop-run-id')).toBe(id)
    const ts = hit.headers.get('x-edgeloop-timestamp')!
    expect(Number(ts)).toBe(Math.floor(fakes.clock.now() / 1000))
    expect(hit.headers.get('x-edgeloop-signature')).toBe(
      `c1=${await hmacHex(WEBHOOK_SECRET, `edgeloop-callback.${ts}.${hit.body}`)}`,
    )
    const body = JSON.parse(hit.body) as RunResult
    expect(body).toMatchObject({ id, ok: true, answer: 'All good.', stopReason: 'finish' })

    const view = await getRun(id)
    expect(view.deliveries).toEqual([
      expect.objectContaining({
        id: 'callback',
        kind: 'callback',
        status: 'delivered',
        attempts: 1,
      }),
    ])
    // Duplicated alarms never deliver twice.
    await runAlarm(id)
    expect(fakes.receiver.hits).toHaveLength(1)
  })

  it('retries a failing receiver with growing delays until it answers 2xx', async () => {
    fakes.ai.enqueue(reply.text('All good.'))
    fakes.receiver.answer(500, 503, 500)
    const id = await startRun({ task: 'Check', tools: ['calculator'], callback_url: CALLBACK })
    await drainAlarms(id)
    expect(fakes.receiver.hits).toHaveLength(1)

    const delays: number[] = []
    for (let attempt = 2; attempt <= 4; attempt++) {
      const before = (await getRun(id)).deliveries[0]!
      expect(before).toMatchObject({ status: 'pending', attempts: attempt - 1 })
      expect(before.lastError).toMatch(/callback to receiver\.test answered HTTP 5\d\d/)
      delays.push(Date.parse(before.nextAt) - fakes.clock.now())
      // Not due yet: an early alarm does not deliver.
      await runAlarm(id)
      expect(fakes.receiver.hits).toHaveLength(attempt - 1)
      fakes.clock.advance(Date.parse(before.nextAt) - fakes.clock.now())
      expect(await drainAlarms(id)).toBe(1)
      expect(fakes.receiver.hits).toHaveLength(attempt)
    }
    // Exponential backoff with jitter: each wait within [base·2ⁿ⁻¹/2, base·2ⁿ⁻¹].
    expect(delays[0]).toBeGreaterThanOrEqual(1_000)
    expect(delays[0]).toBeLessThanOrEqual(2_000)
    expect(delays[1]).toBeGreaterThanOrEqual(2_000)
    expect(delays[1]).toBeLessThanOrEqual(4_000)
    expect(delays[2]).toBeGreaterThanOrEqual(4_000)
    expect(delays[2]).toBeLessThanOrEqual(8_000)

    const view = await getRun(id)
    expect(view.deliveries[0]).toMatchObject({ status: 'delivered', attempts: 4 })
    expect(view.deliveries[0]!.lastError).toBeUndefined()
    // Every attempt carried the same run result and a fresh, valid signature.
    const bodies = new Set(fakes.receiver.hits.map((h) => h.body))
    expect(bodies.size).toBe(1)
    for (const hit of fakes.receiver.hits) {
      const ts = hit.headers.get('x-edgeloop-timestamp')!
      expect(hit.headers.get('x-edgeloop-signature')).toBe(
        `c1=${await hmacHex(WEBHOOK_SECRET, `edgeloop-callback.${ts}.${hit.body}`)}`,
      )
    }
    expect(await runAlarm(id)).toBe(false)
  })

  it('a failed run is delivered too', async () => {
    fakes.ai.enqueue(reply.error(400, 'bad request from the provider'))
    const id = await startRun({ task: 'Check', tools: ['calculator'], callback_url: CALLBACK })
    await drainAlarms(id)
    expect(fakes.receiver.hits).toHaveLength(1)
    expect(JSON.parse(fakes.receiver.hits[0]!.body)).toMatchObject({
      ok: false,
      stopReason: 'model_error',
      answer: '',
    })
  })
})
