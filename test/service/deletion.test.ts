/** Deleting a run, exporting it, and RUN_RETENTION_DAYS, through the Worker's fetch. */
import { env } from 'cloudflare:workers'
import { runInDurableObject } from 'cloudflare:test'
import { afterEach, describe, expect, it } from 'vitest'
import { RunExport } from '../../src/api/response-schemas'
import { reply } from '../fakes/fake-openai'
import {
  api,
  AUTH,
  decide,
  drainAlarms,
  getRun,
  logLines,
  postJson,
  receiverPost,
  runAlarm,
  startAwaitingApproval,
  startRun,
  stubOf,
  useServiceFakes,
} from './harness'

const PAGE = 'x'.repeat(30_000)
const fakes = useServiceFakes({
  hosts: () => ({
    'api.allowed.test': () => new Response(PAGE, { headers: { 'content-type': 'text/plain' } }),
  }),
})
const DAY = 86_400_000

const del = (id: string, headers: HeadersInit = AUTH) =>
  api(`/v1/runs/${id}`, { method: 'DELETE', headers })

async function errorOf(res: Response): Promise<{ status: number; code: string }> {
  const body = (await res.json()) as { error: { code: string } }
  return { status: res.status, code: body.error.code }
}

/** Every read of a run, as a client would make them. */
function reads(id: string): Promise<Response>[] {
  return [
    api(`/v1/runs/${id}`, { headers: AUTH }),
    api(`/v1/runs/${id}/trace`, { headers: AUTH }),
    api(`/v1/runs/${id}/export`, { headers: AUTH }),
    api(`/v1/runs/${id}/events`, { headers: AUTH }),
    api(`/v1/runs/${id}/approvals`, { headers: AUTH }),
    api(`/v1/runs/${id}/observations/obs_call_get`, { headers: AUTH }),
    postJson(`/v1/runs/${id}/cancel`, {}),
    postJson(`/v1/runs/${id}/approvals/call_post`, {
      decision: 'approve',
      args_hash: 'a'.repeat(64),
    }),
  ]
}

async function expectGone(id: string): Promise<void> {
  for (const res of await Promise.all(reads(id))) {
    expect(await errorOf(res), res.url).toEqual({ status: 404, code: 'run_deleted' })
  }
}

/** The run's object's rows, table by table (internal tables left out). */
function rowsOf(id: string): Promise<Record<string, unknown[]>> {
  return runInDurableObject(stubOf(id), (_instance, state) => {
    const sql = state.storage.sql
    const tables = sql
      .exec<{ name: string }>(
        `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '_cf_%'`,
      )
      .toArray()
    return Object.fromEntries(
      tables.map(({ name }) => [name, sql.exec(`SELECT * FROM "${name}"`).toArray()]),
    )
  })
}

async function indexed(id: string): Promise<{ runs: number; approvals: number }> {
  const runs = await env.RUN_INDEX.prepare('SELECT COUNT(*) AS n FROM runs WHERE id = ?')
    .bind(id)
    .first<{ n: number }>()
  const approvals = await env.RUN_INDEX.prepare(
    'SELECT COUNT(*) AS n FROM pending_approvals WHERE run_id = ?',
  )
    .bind(id)
    .first<{ n: number }>()
  return { runs: runs?.n ?? 0, approvals: approvals?.n ?? 0 }
}

/** Only the tombstone and the finished removals are left in the object. */
async function expectWiped(id: string): Promise<void> {
  const rows = await rowsOf(id)
  expect(rows.run).toEqual([{ k: 'deleted', v: expect.stringContaining(id) }])
  for (const [table, list] of Object.entries(rows)) {
    if (table === 'run' || table === 'outbox') continue
    expect(list, table).toEqual([])
  }
  expect((rows.outbox as { kind: string }[]).map((r) => r.kind).sort()).toEqual(
    expect.arrayContaining(['forget.index']),
  )
}

async function finishedRun(): Promise<string> {
  fakes.ai.enqueue(
    reply.toolCalls([
      { id: 'call_get', name: 'http_get', arguments: { url: 'https://api.allowed.test/p' } },
    ]),
    reply.text('Read it.'),
  )
  const id = await startRun({
    task: 'Read the page',
    tools: ['http_get'],
    budget: { maxObservationTokens: 500 },
  })
  await drainAlarms(id)
  expect((await getRun(id)).status).toBe('succeeded')
  return id
}

describe('DELETE /v1/runs/:id', () => {
  it('wipes a finished run: every read is 404, the index forgets it, and it is idempotent', async () => {
    const id = await finishedRun()
    expect(await indexed(id)).toEqual({ runs: 1, approvals: 0 })
    const res = await del(id)
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ id, status: 'deleted' })
    await expectGone(id)
    await expectWiped(id)
    await drainAlarms(id)
    expect(await indexed(id)).toEqual({ runs: 0, approvals: 0 })
    const listed = (await (await api('/v1/runs?limit=100', { headers: AUTH })).json()) as {
      items: { id: string }[]
    }
    expect(listed.items.map((r) => r.id)).not.toContain(id)
    // Again: the same answer, nothing else changes.
    const again = await del(id)
    expect(again.status).toBe(200)
    expect(await again.json()).toEqual({ id, status: 'deleted' })
    const line = logLines(fakes.logs).find((l) => l.msg === 'run_deleted')
    expect(line).toMatchObject({ runId: id, by: 'api', reason: 'api', phase: 'done' })
  })

  it('needs runs:delete, and answers 404 for a run that never was', async () => {
    const id = await finishedRun()
    const starter = { authorization: 'Bearer test-starter-token' }
    expect(await errorOf(await del(id, starter))).toEqual({ status: 403, code: 'forbidden' })
    expect((await getRun(id)).status).toBe('succeeded')
    const unknown = `run_${'0'.repeat(32)}`
    expect(await errorOf(await del(unknown))).toEqual({ status: 404, code: 'run_not_found' })
    expect(await errorOf(await del('not-a-run'))).toEqual({ status: 404, code: 'run_not_found' })
  })

  it('takes a waiting run out of the approvals inbox; its id is never used again', async () => {
    fakes.ai.enqueue(reply.toolCalls([receiverPost('/once')]))
    const key = { 'idempotency-key': 'deleted-run-key' }
    const created = await postJson('/v1/runs', { task: 'Post', tools: ['http_post'] }, key)
    const { id } = (await created.json()) as { id: string }
    await drainAlarms(id)
    expect(await indexed(id)).toEqual({ runs: 1, approvals: 1 })
    expect((await del(id)).status).toBe(200)
    await drainAlarms(id)
    expect(await indexed(id)).toEqual({ runs: 0, approvals: 0 })
    const inbox = (await (await api('/v1/approvals', { headers: AUTH })).json()) as {
      items: { runId: string }[]
    }
    expect(inbox.items.map((a) => a.runId)).not.toContain(id)
    // The same key would name the same id: refused, never a new run under a deleted id.
    const reused = await postJson('/v1/runs', { task: 'Post', tools: ['http_post'] }, key)
    expect(await errorOf(reused)).toEqual({ status: 409, code: 'run_deleted' })
    await expectWiped(id)
    expect(fakes.receiver.hits).toHaveLength(0)
  })

  it('a follow-up of a deleted run is told so', async () => {
    const id = await finishedRun()
    await del(id)
    const res = await postJson('/v1/runs', { task: 'And then?', continue: id })
    expect(await errorOf(res)).toEqual({ status: 404, code: 'run_deleted' })
  })

  it('during a slice: the run stops at once, reads are 404 at once, and it is wiped as the slice ends', async () => {
    fakes.ai.enqueue(reply.toolCalls([receiverPost('/slow')]), reply.text('never asked'))
    const { id, argsHash } = await startAwaitingApproval()
    expect(
      (await decide(id, 'call_post', { decision: 'approve', args_hash: argsHash })).status,
    ).toBe(200)
    const arrived = fakes.receiver.hold()
    const slice = runAlarm(id)
    await arrived
    // The side effect is in flight: the delete does not wait for it.
    const res = await del(id)
    expect(res.status).toBe(202)
    expect(await res.json()).toEqual({ id, status: 'deleting' })
    await expectGone(id)
    expect((await del(id)).status).toBe(202)
    fakes.receiver.release()
    await slice
    await expectWiped(id)
    await drainAlarms(id)
    expect(await indexed(id)).toEqual({ runs: 0, approvals: 0 })
    // The model was not asked again after the delete, and the side effect was sent once.
    expect(fakes.ai.bodies).toHaveLength(1)
    expect(fakes.receiver.hits).toHaveLength(1)
    expect((await del(id)).status).toBe(200)
  })
})

describe('GET /v1/runs/:id/export', () => {
  it('is the whole run: view, state, trace, every observation in full and every event', async () => {
    const id = await finishedRun()
    const res = await api(`/v1/runs/${id}/export`, { headers: AUTH })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toMatch(/^application\/json/)
    const body = RunExport.parse(await res.json())
    expect(body.run.id).toBe(id)
    expect(body.trace.ok).toBe(true)
    expect((body.state as { steps: unknown[] }).steps).toHaveLength(2)
    // The trace shows a truncated observation; the export holds all of it.
    expect(body.trace.steps[0]!.calls[0]!.truncated).toBe(true)
    expect(body.observations.map((o) => o.handle)).toEqual(['obs_call_get'])
    expect(body.observations[0]!.text.includes(PAGE), 'the whole page').toBe(true)
    expect(body.events.map((e) => e.seq)).toEqual(body.events.map((_, i) => i + 1))
    expect(body.events.at(-1)!.type).toBe('run_finished')
    const reader = { authorization: 'Bearer test-reader-token' }
    expect((await api(`/v1/runs/${id}/export`, { headers: reader })).status).toBe(200)
  })
})

describe('RUN_RETENTION_DAYS', () => {
  const vars = env as { RUN_RETENTION_DAYS?: string }
  afterEach(() => {
    delete vars.RUN_RETENTION_DAYS
  })

  it('deletes a finished run that many days after it ended, by its own alarm', async () => {
    vars.RUN_RETENTION_DAYS = '2'
    const id = await finishedRun()
    const ended = Date.now()
    const alarm = await runInDurableObject(stubOf(id), (_i, state) => state.storage.getAlarm())
    expect(alarm).toBe(ended + 2 * DAY)
    fakes.clock.advance(2 * DAY - 1000)
    await drainAlarms(id)
    expect((await getRun(id)).status).toBe('succeeded')
    fakes.clock.advance(1000)
    await drainAlarms(id)
    await expectGone(id)
    await expectWiped(id)
    expect(await indexed(id)).toEqual({ runs: 0, approvals: 0 })
    const line = logLines(fakes.logs).find((l) => l.msg === 'run_deleted')
    expect(line).toMatchObject({ runId: id, by: 'retention', reason: 'retention' })
  })

  it('never deletes a run waiting for a person; its days count from when it ends', async () => {
    vars.RUN_RETENTION_DAYS = '1'
    fakes.ai.enqueue(reply.toolCalls([receiverPost('/late')]), reply.text('Posted.'))
    const { id, argsHash } = await startAwaitingApproval()
    // Longer than the retention, short of the approval's expiry (APPROVAL_TTL_SECONDS, 1 day).
    fakes.clock.advance(DAY - 60_000)
    await drainAlarms(id)
    expect((await getRun(id)).status).toBe('awaiting_approval')
    // The decision arrives as the retention would be due if the run had ended when it asked.
    fakes.clock.advance(59_000)
    const decided = await decide(id, 'call_post', { decision: 'approve', args_hash: argsHash })
    expect(decided.status).toBe(200)
    await drainAlarms(id)
    expect((await getRun(id)).status).toBe('succeeded')
    expect(fakes.receiver.hits.map((h) => h.path)).toEqual(['/late'])
    fakes.clock.advance(DAY - 1000)
    await drainAlarms(id)
    expect((await getRun(id)).status).toBe('succeeded')
    fakes.clock.advance(1000)
    await drainAlarms(id)
    await expectGone(id)
  })

  it('a bad value deletes nothing and readiness names it', async () => {
    vars.RUN_RETENTION_DAYS = 'soon'
    const id = await finishedRun()
    fakes.clock.advance(400 * DAY)
    await drainAlarms(id)
    expect((await getRun(id)).status).toBe('succeeded')
    const ready = (await (await api('/readyz', { headers: AUTH })).json()) as {
      error: { details: { problems: { variable: string }[] } }
    }
    expect(ready.error.details.problems.map((p) => p.variable)).toContain('RUN_RETENTION_DAYS')
  })
})
