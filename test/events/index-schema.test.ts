/**
 * The run index's D1 tables in a database made before some of their columns existed: the first
 * index access of an isolate adds them (and fills the owner of older rows), and the list serves
 * the older runs. Nothing else in this file touches the index first.
 */
import { env } from 'cloudflare:workers'
import { expect, it } from 'vitest'
import { api, AUTH } from '../service/harness'
import { EVERY_INDEX, indexColumns, indexNames, RUN_COLUMNS } from './index-schema-probe'

const OLD = `run_${'7'.repeat(32)}`
const SLACK = `run_${'6'.repeat(32)}`

it('a database from before the added columns gains them and lists its older runs', async () => {
  const db = env.RUN_INDEX
  await db.batch([
    db.prepare(`CREATE TABLE runs (
       id TEXT PRIMARY KEY, task TEXT NOT NULL, status TEXT NOT NULL, created_at INTEGER NOT NULL,
       updated_at INTEGER NOT NULL, steps INTEGER NOT NULL, requested_by TEXT NOT NULL,
       metadata TEXT, version INTEGER NOT NULL)`),
    db.prepare(`CREATE TABLE pending_approvals (
       run_id TEXT NOT NULL, call_id TEXT NOT NULL, tool TEXT NOT NULL, args TEXT NOT NULL,
       args_hash TEXT NOT NULL, reason TEXT NOT NULL, requested_by TEXT NOT NULL,
       requested_at INTEGER NOT NULL, expires_at INTEGER NOT NULL, PRIMARY KEY (run_id, call_id))`),
    db
      .prepare(`INSERT INTO runs VALUES (?, 'Older', 'succeeded', 1000, 2000, 2, 'api', NULL, 3)`)
      .bind(OLD),
    db
      .prepare(
        `INSERT INTO runs VALUES (?, 'From Slack', 'succeeded', 900, 950, 1, 'slack:U1', NULL, 2)`,
      )
      .bind(SLACK),
  ])

  const res = await api('/v1/runs?limit=10', { headers: AUTH })
  const body = (await res.json()) as { items: { id: string; task: string; status: string }[] }
  expect(res.status, JSON.stringify(body)).toBe(200)
  expect(body.items.map((r) => [r.id, r.task, r.status])).toEqual([
    [OLD, 'Older', 'succeeded'],
    [SLACK, 'From Slack', 'succeeded'],
  ])

  expect(await indexColumns(db, 'runs')).toEqual(RUN_COLUMNS)
  expect(await indexColumns(db, 'pending_approvals')).toEqual(
    expect.arrayContaining(['owner', 'item']),
  )
  const owners = await db.prepare('SELECT id, owner FROM runs ORDER BY id').all()
  expect(owners.results).toEqual([
    { id: SLACK, owner: null },
    { id: OLD, owner: 'api' },
  ])
  expect(await indexNames(db)).toEqual(EVERY_INDEX)
})
