/**
 * The run index on a database that has its tables but lacks a column no index names
 * (`pending_approvals.item`) and an index (`runs_by_owner`): the isolate's first index access
 * succeeds as it is, and the look at the columns in the same batch adds the column; the index
 * comes with the batch. Nothing else in this file's isolate touches the index first.
 */
import { env } from 'cloudflare:workers'
import { expect, it } from 'vitest'
import { api, AUTH } from '../service/harness'
import { countRoundTrips, indexColumns, indexNames } from './index-schema-probe'

const RUN = `run_${'5'.repeat(32)}`
const FAR = 4_000_000_000_000

it('a database missing a column and an index gains both with its first access', async () => {
  const db = env.RUN_INDEX
  await db.batch([
    db.prepare(`CREATE TABLE runs (
       id TEXT PRIMARY KEY, task TEXT NOT NULL, status TEXT NOT NULL, created_at INTEGER NOT NULL,
       updated_at INTEGER NOT NULL, steps INTEGER NOT NULL, requested_by TEXT NOT NULL,
       metadata TEXT, version INTEGER NOT NULL, conversation_id TEXT, conversation_position INTEGER,
       agent_name TEXT, agent_version TEXT, owner TEXT, parent_run_id TEXT)`),
    db.prepare(`CREATE TABLE pending_approvals (
       run_id TEXT NOT NULL, call_id TEXT NOT NULL, tool TEXT NOT NULL, args TEXT NOT NULL,
       args_hash TEXT NOT NULL, reason TEXT NOT NULL, requested_by TEXT NOT NULL,
       requested_at INTEGER NOT NULL, expires_at INTEGER NOT NULL, owner TEXT,
       PRIMARY KEY (run_id, call_id))`),
    db.prepare(`CREATE TABLE deleted_runs (id TEXT PRIMARY KEY, deleted_at INTEGER NOT NULL)`),
    db
      .prepare(
        `INSERT INTO runs VALUES (?1, 'Waiting', 'awaiting_approval', 1000, 2000, 1, 'api', NULL, 2,
           ?1, 0, 'default', '', 'api', NULL)`,
      )
      .bind(RUN),
    db
      .prepare(
        `INSERT INTO pending_approvals VALUES (?1, 'call_1', 'http_post', '{}', 'h', 'confirm',
           'api', 1500, ?2, 'api')`,
      )
      .bind(RUN, FAR),
  ])

  const d1 = countRoundTrips(db)
  const res = await api('/v1/runs?limit=10', { headers: AUTH })
  d1.restore()
  const body = (await res.json()) as { items: { id: string; status: string }[] }
  expect(res.status, JSON.stringify(body)).toBe(200)
  expect(body.items.map((r) => [r.id, r.status])).toEqual([[RUN, 'awaiting_approval']])
  // The list with the schema in one batch, then the one column's ALTER.
  expect(d1.trips).toHaveLength(2)

  expect(await indexColumns(db, 'pending_approvals')).toContain('item')
  expect(await indexNames(db)).toContain('runs_by_owner')
  const approvals = await api('/v1/approvals?limit=10', { headers: AUTH })
  const listed = (await approvals.json()) as { items: { runId: string; kind: string }[] }
  expect(approvals.status, JSON.stringify(listed)).toBe(200)
  expect(listed.items.map((a) => [a.runId, a.kind])).toEqual([[RUN, 'approval']])
})
