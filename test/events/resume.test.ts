/**
 * The events of a run that dies and resumes: whatever point it dies at, the stored
 * stream ends up with every event once, numbered without a gap, and equal to an undisturbed run.
 * The death is made as in test/service/resume.test.ts: a slice is cut after a chosen transition
 * and the object killed, or the object's rows are copied at a transition, written back after the
 * slice went on, and the object killed (storage exactly as it was when it "died").
 */
import { abortAllDurableObjects, evictDurableObject, runInDurableObject } from 'cloudflare:test'
import { describe, expect, it } from 'vitest'
import type { RunEvent } from '../../src/runs/events/events'
import { reply } from '../fakes/fake-openai'
import {
  api,
  AUTH,
  decide,
  drainAlarms,
  getRun,
  RECEIVER,
  runAlarm,
  startRun,
  stubOf,
  useServiceFakes,
} from '../service/harness'
import { saved, watchRun, type ChangeMatch } from '../service/run-watch'
import { readSse } from './sse'

const fakes = useServiceFakes()

function scriptModel(): void {
  fakes.ai.enqueue(
    reply.toolCalls([{ id: 'call_calc', name: 'calculator', arguments: { expression: '6 * 7' } }]),
    reply.toolCalls(
      [
        {
          id: 'call_post',
          name: 'http_post',
          arguments: { url: `https://${RECEIVER}/record`, body: { value: 42 } },
        },
      ],
      { content: 'Record 42.' },
    ),
    reply.text('Recorded 42.'),
  )
}

const TYPES = [
  'step_started',
  'model_replied',
  'call_started',
  'call_finished',
  'step_started',
  'model_replied',
  'approval_requested',
  'approval_decided',
  'call_started',
  'call_finished',
  'step_started',
  'model_replied',
  'run_finished',
]

async function history(id: string): Promise<RunEvent[]> {
  return readSse(await api(`/v1/runs/${id}/events`, { headers: AUTH })).toEnd()
}

/** Runs alarms (approving the post when asked) until the run ends. */
async function finish(id: string, onAlarm: () => Promise<void> = async () => {}) {
  for (let n = 0; n < 30; n++) {
    const view = await getRun(id)
    if (view.status === 'succeeded' || view.status === 'failed') return
    const pending = view.pendingApprovals[0]
    if (pending) {
      await decide(id, pending.callId, { decision: 'approve', args_hash: pending.argsHash })
    }
    await runAlarm(id)
    await onAlarm()
  }
}

function expectComplete(events: RunEvent[]) {
  expect(events.map((e) => e.seq)).toEqual(TYPES.map((_t, i) => i + 1))
  expect(events.map((e) => e.type)).toEqual(TYPES)
  expect(events.at(-1)!.data).toMatchObject({ ok: true, answer: 'Recorded 42.' })
}

async function kill(id: string, how: 'evict' | 'abort') {
  if (how === 'evict') await evictDurableObject(stubOf(id))
  else await abortAllDurableObjects()
}

const cuts: [string, ChangeMatch][] = [
  ['think (step 0)', saved.think(0)],
  ['run_call calculator', saved.ranCall('calculator')],
  ['think (step 1)', saved.think(1)],
  ['run_call http_post', saved.ranCall('http_post')],
]

describe.each(['evict', 'abort'] as const)('killed by %s', (how) => {
  it.each(cuts)('after %s: every event once, no gap', async (_name, match) => {
    scriptModel()
    // The slice checkpoints right after this transition; the object is killed there.
    const id = await startRun({ task: 'Compute and record', tools: ['calculator', 'http_post'] })
    const cut = (await watchRun(id)).once(match, () => fakes.clock.advance(10 * 60_000))
    let killed = false
    await finish(id, async () => {
      if (cut.fired() && !killed) {
        killed = true
        await kill(id, how)
      }
    })
    expect(killed).toBe(true)
    expectComplete(await history(id))
  })
})

describe('died in the middle of a slice', () => {
  it('the rows it wrote after the copy are gone, and the resumed run writes them once', async () => {
    scriptModel()
    const id = await startRun({ task: 'Compute and record', tools: ['calculator', 'http_post'] })
    await drainAlarms(id)
    let sql: SqlStorage | undefined
    await runInDurableObject(stubOf(id), (_i, state) => {
      sql = state.storage.sql
    })
    const tables = ['run', 'step', 'event', 'outbox', 'observation']
    let rows: Record<string, Record<string, SqlStorageValue>[]> | undefined
    // Copied when the side effect's `started` record is written: the run "dies" right there.
    ;(await watchRun(id)).once(saved.startedCall(), () => {
      // A run makes its observation table only when it first stores one: copy what exists.
      const present = new Set(
        sql!
          .exec(`SELECT name FROM sqlite_master WHERE type = 'table'`)
          .toArray()
          .map((r) => r.name),
      )
      rows = Object.fromEntries(
        tables.map((t) => [t, present.has(t) ? sql!.exec(`SELECT * FROM ${t}`).toArray() : []]),
      )
    })
    const pending = (await getRun(id)).pendingApprovals[0]!
    await decide(id, pending.callId, { decision: 'approve', args_hash: pending.argsHash })
    await drainAlarms(id)
    expect((await getRun(id)).status).toBe('succeeded')
    expect(rows!.event!.map((r) => r.type).at(-1)).toBe('call_started')

    await runInDurableObject(stubOf(id), (_i, state) => {
      const db = state.storage.sql
      const present = new Set(
        db
          .exec(`SELECT name FROM sqlite_master WHERE type = 'table'`)
          .toArray()
          .map((r) => r.name),
      )
      for (const t of tables.filter((name) => present.has(name))) {
        db.exec(`DELETE FROM ${t}`)
        for (const r of rows![t]!) {
          const cols = Object.keys(r)
          db.exec(
            `INSERT INTO ${t} (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`,
            ...cols.map((c) => r[c]),
          )
        }
      }
      return state.storage.setAlarm(Date.now())
    })
    await kill(id, 'abort')
    // The dead run had already asked for step 2; its resumed self asks again.
    fakes.ai.enqueue(reply.text('Recorded 42.'))
    await drainAlarms(id)
    expect((await getRun(id)).status).toBe('succeeded')
    expectComplete(await history(id))
  })
})
