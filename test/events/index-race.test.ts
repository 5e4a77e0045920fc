/**
 * The run index while a delivery of it is under way: a change the run makes meanwhile (a person
 * deciding while the index write waits for D1) is written after it, not marked delivered with it.
 */
import { env } from 'cloudflare:workers'
import { runInDurableObject } from 'cloudflare:test'
import { describe, expect, it } from 'vitest'
import { reply } from '../fakes/fake-openai'
import {
  api,
  AUTH,
  decide,
  drainAlarms,
  getRun,
  runAlarm,
  startRun,
  stubOf,
  useServiceFakes,
} from '../service/harness'

const fakes = useServiceFakes()

const post = (n: number) => ({
  id: `call_post_${n}`,
  name: 'http_post',
  arguments: { url: 'https://receiver.test/record', body: { n } },
})

function indexEntry(id: string): Promise<string | undefined> {
  return runInDurableObject(stubOf(id), (_i, state) => {
    const rows = state.storage.sql
      .exec<{ status: string }>(`SELECT status FROM outbox WHERE id = 'index'`)
      .toArray()
    return rows[0]?.status
  })
}

/** The run's row in `GET /v1/runs` (read from D1, not from the run's object), if listed. */
async function listedStatus(id: string): Promise<string | undefined> {
  const res = await api('/v1/runs?limit=100', { headers: AUTH })
  const page = (await res.json()) as { items: { id: string; status: string }[] }
  return page.items.find((i) => i.id === id)?.status
}

describe('the run index', () => {
  it('writes a decision made while an earlier index write was in flight', async () => {
    fakes.ai.enqueue(reply.toolCalls([post(1), post(2)], { content: 'Post both.' }))
    const id = await startRun({ task: 'Post both', tools: ['http_post'] })
    // Hold the index's D1 write of the waiting run until released (the Durable Object shares
    // this binding).
    const d1 = env.RUN_INDEX as D1Database & { batch: D1Database['batch'] }
    const batch = d1.batch.bind(d1)
    let release!: () => void
    const held = new Promise<void>((r) => (release = r))
    let writes = 0
    d1.batch = (async (statements: D1PreparedStatement[]) => {
      // The row with both pending approvals: the upsert, the delete and two inserts.
      if (statements.length === 4) {
        writes++
        await held
      }
      return batch(statements)
    }) as D1Database['batch']
    try {
      const alarm = runAlarm(id)
      await expect.poll(() => writes, { timeout: 5_000 }).toBeGreaterThan(0)
      // The run waits for both approvals; one is decided while the index write waits.
      const first = (await getRun(id)).pendingApprovals.find((a) => a.callId === 'call_post_1')!
      await decide(id, first.callId, { decision: 'deny', args_hash: first.argsHash })
      release()
      await alarm
    } finally {
      d1.batch = batch
    }
    // The write that was in flight showed both approvals: the index is due again, and the inbox
    // offers only the call still waiting once it is written.
    expect(await indexEntry(id)).toBe('pending')
    await drainAlarms(id)
    const inbox = await api('/v1/approvals?status=pending&limit=100', { headers: AUTH })
    const items = ((await inbox.json()) as { items: { runId: string; callId: string }[] }).items
    expect(items.filter((i) => i.runId === id).map((i) => i.callId)).toEqual(['call_post_2'])
  })

  it("holds a written row's mark for the run's next write, in the same commit", async () => {
    // The model never answers: the run's next write is the cancel's.
    fakes.ai.enqueue(reply.hang())
    const id = await startRun({ task: 'Wait', tools: ['calculator'] })
    const alarm = runAlarm(id)
    // The row is in D1 while the model call waits, and the run's outbox has not written its
    // mark: no commit of its own (docs/development.md#worker-cpu-per-run-beside-the-peer).
    await expect.poll(() => listedStatus(id), { timeout: 5_000 }).toBe('running')
    expect(await indexEntry(id)).toBe('pending')
    const cancelled = await api(`/v1/runs/${id}/cancel`, {
      method: 'POST',
      headers: { ...AUTH, 'Content-Type': 'application/json' },
      body: JSON.stringify({ reason: 'test' }),
    })
    expect(cancelled.status).toBe(202)
    await alarm
    await drainAlarms(id)
    expect(await listedStatus(id)).toBe('failed')
    // Delivered: the view lists it no more; the cancelled run's row is the last one written.
    expect(await indexEntry(id)).toBe('delivered')
    expect((await getRun(id)).deliveries.find((d) => d.kind === 'index')).toBeUndefined()
  })
})
