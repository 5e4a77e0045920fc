import { OWNER_FROM_REQUESTER_SQL } from '../run-owner'

/**
 * The run index's tables in D1 (docs/architecture.md#events). The schema is created by the code
 * (`CREATE TABLE IF NOT EXISTS`, once per isolate), so no migration step is needed; columns added
 * later are added to an existing table the same way. A new database gets every column at once.
 */
const SCHEMA = [
  `CREATE TABLE IF NOT EXISTS runs (
     id TEXT PRIMARY KEY, task TEXT NOT NULL, status TEXT NOT NULL, created_at INTEGER NOT NULL,
     updated_at INTEGER NOT NULL, steps INTEGER NOT NULL, requested_by TEXT NOT NULL,
     metadata TEXT, version INTEGER NOT NULL, conversation_id TEXT, conversation_position INTEGER,
     agent_name TEXT, agent_version TEXT, owner TEXT, parent_run_id TEXT)`,
  `CREATE INDEX IF NOT EXISTS runs_by_created ON runs (created_at DESC, id DESC)`,
  `CREATE INDEX IF NOT EXISTS runs_by_status ON runs (status, created_at DESC, id DESC)`,
  `CREATE TABLE IF NOT EXISTS pending_approvals (
     run_id TEXT NOT NULL, call_id TEXT NOT NULL, tool TEXT NOT NULL, args TEXT NOT NULL,
     args_hash TEXT NOT NULL, reason TEXT NOT NULL, requested_by TEXT NOT NULL,
     requested_at INTEGER NOT NULL, expires_at INTEGER NOT NULL, owner TEXT, item TEXT,
     PRIMARY KEY (run_id, call_id))`,
  `CREATE INDEX IF NOT EXISTS approvals_by_requested ON pending_approvals (requested_at DESC)`,
  // Deleted runs' ids: a late write of a deleted run's row (a delivery in flight when it was
  // deleted) must not bring it back to the list.
  `CREATE TABLE IF NOT EXISTS deleted_runs (id TEXT PRIMARY KEY, deleted_at INTEGER NOT NULL)`,
]

/**
 * Columns added after the first deployments (also in the CREATE TABLE above, for a new
 * database): a table created before them gains them once (`ALTER TABLE` has no IF NOT EXISTS;
 * another isolate may win the race).
 */
const ADDED_COLUMNS: [table: string, column: string, ddl: string, fill?: string][] = [
  // The conversation a run belongs to (docs/architecture.md#conversations); NULL in older rows,
  // which each started their own.
  ['runs', 'conversation_id', 'ALTER TABLE runs ADD COLUMN conversation_id TEXT'],
  ['runs', 'conversation_position', 'ALTER TABLE runs ADD COLUMN conversation_position INTEGER'],
  // The run's agent (docs/agents.md); NULL in older rows, which ran as the default agent.
  ['runs', 'agent_name', 'ALTER TABLE runs ADD COLUMN agent_name TEXT'],
  ['runs', 'agent_version', 'ALTER TABLE runs ADD COLUMN agent_version TEXT'],
  // The run's owner (runs/run-owner.ts), which a token limited to its own runs lists by. Rows
  // from before owners get the same owner ownerOf gives their runs, once, as the column comes.
  [
    'runs',
    'owner',
    'ALTER TABLE runs ADD COLUMN owner TEXT',
    `UPDATE runs SET owner = ${OWNER_FROM_REQUESTER_SQL} WHERE owner IS NULL`,
  ],
  [
    'pending_approvals',
    'owner',
    'ALTER TABLE pending_approvals ADD COLUMN owner TEXT',
    `UPDATE pending_approvals SET owner = ${OWNER_FROM_REQUESTER_SQL} WHERE owner IS NULL`,
  ],
  // A pending item's kind, what it asks and its edit schema (docs/human-in-the-loop.md); NULL
  // in rows written when approvals were the only kind.
  ['pending_approvals', 'item', 'ALTER TABLE pending_approvals ADD COLUMN item TEXT'],
  // The run that delegated this one (docs/agents.md#delegation); NULL for every other run.
  ['runs', 'parent_run_id', 'ALTER TABLE runs ADD COLUMN parent_run_id TEXT'],
]
const ADDED_INDEXES = [
  `CREATE INDEX IF NOT EXISTS runs_by_conversation ON runs (conversation_id, created_at DESC, id DESC)`,
  `CREATE INDEX IF NOT EXISTS runs_by_agent ON runs (agent_name, created_at DESC, id DESC)`,
  `CREATE INDEX IF NOT EXISTS runs_by_owner ON runs (owner, created_at DESC, id DESC)`,
  `CREATE INDEX IF NOT EXISTS approvals_by_owner ON pending_approvals (owner, requested_at DESC)`,
  `CREATE INDEX IF NOT EXISTS runs_by_parent ON runs (parent_run_id, created_at DESC, id DESC)`,
]

const ready = new WeakMap<D1Database, Promise<void>>()

const TABLES = [...new Set(ADDED_COLUMNS.map(([table]) => table))]

/** Creates the tables once per isolate and database; a failure is retried by the next call. */
export function ensureSchema(db: D1Database): Promise<void> {
  let p = ready.get(db)
  if (!p) {
    p = createSchema(db)
    p.catch(() => ready.delete(db))
    ready.set(db, p)
  }
  return p
}

/**
 * One round trip to D1 where every column is there (every isolate's but the very first's): the
 * tables, the indexes and a look at the columns in one batch. A database from before an indexed
 * column fails that batch whole (a D1 batch is one transaction): it gets the tables and their
 * columns first, then the indexes. A round trip per added column used to make an isolate's first
 * index write wait for nine of them, in the first run after a start; then two
 * (docs/development.md#the-peer-bench).
 */
async function createSchema(db: D1Database): Promise<void> {
  let columns: Map<string, Set<string>>
  try {
    columns = await tablesWith(db, [...SCHEMA, ...ADDED_INDEXES])
  } catch (err) {
    if (!/no such column/i.test(String((err as Error).message))) throw err
    await addColumns(db, await tablesWith(db, SCHEMA))
    await db.batch(ADDED_INDEXES.map((s) => db.prepare(s)))
    return
  }
  // Columns without an index of their own may still be missing.
  await addColumns(db, columns)
}

/** Runs `statements` and reads each table's columns in the same batch. */
async function tablesWith(db: D1Database, statements: string[]): Promise<Map<string, Set<string>>> {
  // PRAGMA table_info is the statement form D1 documents (docs: D1 "Database commands").
  const info = TABLES.map((t) => db.prepare(`PRAGMA table_info(${t})`))
  const out = await db.batch<{ name: string }>([...statements.map((s) => db.prepare(s)), ...info])
  return new Map(
    TABLES.map((t, i) => [t, new Set(out[statements.length + i]!.results.map((c) => c.name))]),
  )
}

async function addColumns(db: D1Database, columns: Map<string, Set<string>>): Promise<void> {
  for (const [table, column, ddl, fill] of ADDED_COLUMNS) {
    if (columns.get(table)!.has(column)) continue
    try {
      await db.prepare(ddl).run()
    } catch (err) {
      // Another isolate added it between the look and the ALTER (and fills it).
      if (!/duplicate column/i.test(String((err as Error).message))) throw err
      continue
    }
    if (fill) await db.prepare(fill).run()
  }
}
