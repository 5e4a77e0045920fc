/**
 * A run killed between the `started` record of an MCP side effect and its result (the method of
 * test/service/resume.test.ts: copy the rows when `start_call` is written, let the call happen,
 * write the copy back, evict the object). A destructive tool is not sent again: its outcome is
 * unknown. An idempotent one is sent again with the same idempotency key in `_meta`.
 */
import { evictDurableObject, runInDurableObject } from 'cloudflare:test'
import { describe, expect, it } from 'vitest'
import { reply } from '../fakes/fake-openai'
import { FakeMcp, FAKE_MCP_HOST } from '../fakes/fake-mcp'
import {
  decide,
  drainAlarms,
  getRun,
  getTrace,
  startRun,
  stubOf,
  useServiceFakes,
} from '../service/harness'
import { watchRun } from '../service/run-watch'

let mcp: FakeMcp
const fakes = useServiceFakes({
  hosts: () => {
    mcp = new FakeMcp()
    return { [FAKE_MCP_HOST]: mcp.handler }
  },
})

type Rows = { run: { k: string; v: string }[]; step: { i: number; json: string }[] }

/** Approves the run's one pending call and kills the run right after its `started` record. */
async function approveAndCrashAfterStart(id: string, callId: string): Promise<void> {
  let sql: SqlStorage | undefined
  await runInDurableObject(stubOf(id), (_instance, state) => {
    sql = state.storage.sql
  })
  let rows: Rows | undefined
  const watch = await watchRun(id)
  watch.once(
    (c) =>
      c.after.steps.some((st) => st.calls.some((x) => x.id === callId && x.status === 'started')),
    () => {
      rows = {
        run: sql!.exec<{ k: string; v: string }>('SELECT k, v FROM run').toArray(),
        step: sql!.exec<{ i: number; json: string }>('SELECT i, json FROM step').toArray(),
      }
    },
  )
  const pending = (await getRun(id)).pendingApprovals[0]!
  await decide(id, callId, { decision: 'approve', args_hash: pending.argsHash })
  await drainAlarms(id) // the call is sent and its result recorded; then storage goes back
  expect(rows, 'start_call was never written').toBeDefined()
  await runInDurableObject(stubOf(id), (_instance, state) => {
    const db = state.storage.sql
    db.exec('DELETE FROM step')
    for (const r of rows!.step) db.exec('INSERT INTO step (i, json) VALUES (?, ?)', r.i, r.json)
    db.exec('DELETE FROM run')
    for (const r of rows!.run) db.exec('INSERT INTO run (k, v) VALUES (?, ?)', r.k, r.v)
    return state.storage.setAlarm(Date.now())
  })
  await evictDurableObject(stubOf(id))
  expect((await getTrace(id)).steps[0]!.calls[0]).toMatchObject({ id: callId, status: 'started' })
}

describe('an MCP side effect interrupted after it started', () => {
  it('destructive: not sent again, the outcome is unknown', async () => {
    fakes.ai.enqueue(
      reply.toolCalls([{ id: 'c1', name: 'docs__delete_page', arguments: { page: 'faq' } }]),
      reply.text('The delete may have happened; check the page.'),
      reply.text('The delete may have happened; check the page.'),
    )
    const id = await startRun({ task: 'Delete the FAQ', tools: ['docs__delete_page'] })
    await drainAlarms(id)
    await approveAndCrashAfterStart(id, 'c1')
    await drainAlarms(id)

    const trace = await getTrace(id)
    expect(trace).toMatchObject({ ok: true, stopReason: 'finish' })
    expect(trace.steps[0]!.calls[0]).toMatchObject({ kind: 'outcome_unknown' })
    expect(trace.steps[0]!.calls[0]!.observation).toMatch(
      /^\[ToolError\] outcome unknown: docs__delete_page \(call c1\) was started/,
    )
    expect(mcp.calls.map((c) => c.tool)).toEqual(['delete_page']) // once, never twice
  })

  it('idempotent: sent again with the same idempotency key', async () => {
    fakes.ai.enqueue(
      reply.toolCalls([
        { id: 'c1', name: 'docs__upsert_page', arguments: { page: 'setup', text: 'npm ci' } },
      ]),
      reply.text('Saved.'),
      reply.text('Saved.'),
    )
    const id = await startRun({ task: 'Save the setup page', tools: ['docs__upsert_page'] })
    await drainAlarms(id)
    await approveAndCrashAfterStart(id, 'c1')
    await drainAlarms(id)

    const trace = await getTrace(id)
    expect(trace).toMatchObject({ ok: true, answer: 'Saved.' })
    expect(trace.steps[0]!.calls[0]).toMatchObject({ kind: 'ok', status: 'done' })
    expect(mcp.calls.map((c) => [c.tool, c.idempotencyKey])).toEqual([
      ['upsert_page', `${id}:c1`],
      ['upsert_page', `${id}:c1`],
    ])
  })
})
