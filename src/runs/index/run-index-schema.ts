import { OWNER_FROM_REQUESTER_SQL } from '../run-owner'

/**
 * The run index's tables in D1 (docs/architecture.md#events). The schema is created by the code
 * (`CREATE TABLE IF NOT EXISTS`, with an isolate's first batch: indexBatch), so no migration step
 * is needed; columns added later are added to an existing table the same way. A new database
 * gets every column at once.
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

/** Databases whose schema this isolate has seen complete: their batches go as they are. */
const ready = new WeakSet<D1Database>()

const TABLES = [...new Set(ADDED_COLUMNS.map(([table]) => table))]

/** What D1 says when a statement names a column or table the database does not have. */
const MISSING = /no such (column|table)|has no column named/i

/**
 * Runs `statements` on the run index as one D1 batch (one transaction), its results in order.
 * An isolate's first batch carries the schema in front of the statements, in the same
 * transaction: the tables and indexes (`IF NOT EXISTS`) and a look at the columns. So a new
 * database and one that is up to date both take one round trip, where the schema's own batch
 * and then the statements took two, on every isolate's first index write: the first run after
 * a start (docs/development.md#the-first-run-after-a-fresh-start). A database from before a
 * column fails that batch whole (an index or a statement names the column): it gets its
 * columns first, then the indexes with the statements.
 */
export async function indexBatch<T = Record<string, unknown>>(
  db: D1Database,
  statements: D1PreparedStatement[],
): Promise<D1Result<T>[]> {
  if (ready.has(db)) return db.batch<T>(statements)
  const schema = [...SCHEMA, ...ADDED_INDEXES].map((s) => db.prepare(s))
  let out: D1Result[]
  try {
    out = await db.batch([...schema, ...statements, ...columnLooks(db)])
  } catch (err) {
    if (!MISSING.test(String((err as Error).message))) throw err
    await addColumns(db, await tablesWith(db, SCHEMA))
    const indexes = ADDED_INDEXES.map((s) => db.prepare(s))
    const done = await db.batch<T>([...indexes, ...statements])
    ready.add(db)
    return done.slice(indexes.length)
  }
  // Columns that no index and no statement of this batch names may still be missing.
  await addColumns(db, columnsOf(out.slice(schema.length + statements.length)))
  ready.add(db)
  return out.slice(schema.length, schema.length + statements.length) as D1Result<T>[]
}

/** The rows of one query on the run index (through indexBatch: the schema comes first). */
export async function indexQuery<T>(db: D1Database, statement: D1PreparedStatement): Promise<T[]> {
  const [out] = await indexBatch<T>(db, [statement])
  return out!.results
}

/** Runs `statements` and reads each table's columns in the same batch. */
async function tablesWith(db: D1Database, statements: string[]): Promise<Map<string, Set<string>>> {
  const out = await db.batch([...statements.map((s) => db.prepare(s)), ...columnLooks(db)])
  return columnsOf(out.slice(statements.length))
}

/** A look at each table's columns, in TABLES' order. */
function columnLooks(db: D1Database): D1PreparedStatement[] {
  // PRAGMA table_info is the statement form D1 documents (docs: D1 "Database commands").
  return TABLES.map((t) => db.prepare(`PRAGMA table_info(${t})`))
}

/** Each table's columns from the results of columnLooks. */
function columnsOf(info: D1Result[]): Map<string, Set<string>> {
  return new Map(
    TABLES.map((t, i) => [t, new Set((info[i]!.results as { name: string }[]).map((c) => c.name))]),
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
