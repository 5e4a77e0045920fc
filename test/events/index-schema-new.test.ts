/**
 * The run index on a new database: an isolate's first index access carries the schema in the
 * same D1 batch as its own statements (one round trip), and leaves every table, column and index
 * in place. Nothing else in this file's isolate touches the index first.
 */
import { env } from 'cloudflare:workers'
import { expect, it } from 'vitest'
import { reply } from '../fakes/fake-openai'
import { api, AUTH, drainAlarms, startRun, useServiceFakes } from '../service/harness'
import {
  countRoundTrips,
  EVERY_INDEX,
  RUN_COLUMNS,
  indexColumns,
  indexNames,
} from './index-schema-probe'

const fakes = useServiceFakes()

it('the first list on a new database is one D1 round trip, and leaves the schema complete', async () => {
  const d1 = countRoundTrips(env.RUN_INDEX)
  const res = await api('/v1/runs?limit=10', { headers: AUTH })
  expect(res.status).toBe(200)
  expect(((await res.json()) as { items: unknown[] }).items).toEqual([])
  expect(d1.trips).toHaveLength(1)
  d1.restore()

  expect(await indexColumns(env.RUN_INDEX, 'runs')).toEqual(RUN_COLUMNS)
  expect(await indexColumns(env.RUN_INDEX, 'pending_approvals')).toContain('item')
  expect(await indexNames(env.RUN_INDEX)).toEqual(EVERY_INDEX)

  // Later index writes are a batch of their own statements only.
  fakes.ai.enqueue(reply.text('Done.'))
  const id = await startRun({ task: 'Say done.' })
  const later = countRoundTrips(env.RUN_INDEX)
  await drainAlarms(id)
  later.restore()
  // The run's row as it started and as it ended: one statement each (a run that never had a
  // pending item has no approvals in the index to replace).
  expect(later.trips).toEqual([1, 1])
  const listed = (await (await api('/v1/runs?limit=10', { headers: AUTH })).json()) as {
    items: { id: string; status: string }[]
  }
  expect(listed.items.map((r) => [r.id, r.status])).toEqual([[id, 'succeeded']])
})
