/** What the index-schema tests read of the run index's D1 database, and how they count its use. */

/**
 * Counts the round trips to D1 made in this isolate from now on (the Worker's, its Durable
 * Objects' and the test's: they share the isolate and the binding's classes), each as the number
 * of statements it carried: a batch, or one statement's `all`, `first`, `run` or `raw`, until
 * `restore()`.
 */
export function countRoundTrips(db: D1Database): { trips: number[]; restore: () => void } {
  const trips: number[] = []
  const undo: (() => void)[] = []
  const patch = (
    proto: Record<string, unknown>,
    name: string,
    size: (args: unknown[]) => number,
  ) => {
    const original = proto[name] as (...args: unknown[]) => unknown
    proto[name] = function (this: unknown, ...args: unknown[]) {
      trips.push(size(args))
      return original.apply(this, args)
    }
    undo.push(() => void (proto[name] = original))
  }
  patch(Object.getPrototypeOf(db), 'batch', (args) => (args[0] as unknown[]).length)
  const statement = Object.getPrototypeOf(db.prepare('SELECT 1'))
  for (const name of ['all', 'first', 'run', 'raw']) patch(statement, name, () => 1)
  return { trips, restore: () => undo.forEach((u) => u()) }
}

/** A table's columns, in order. */
export async function indexColumns(db: D1Database, table: string): Promise<string[]> {
  const { results } = await db.prepare(`PRAGMA table_info(${table})`).all<{ name: string }>()
  return results.map((c) => c.name)
}

/** The columns of the run index's `runs` table, in order (an older table gains them in this order). */
export const RUN_COLUMNS = [
  'id',
  'task',
  'status',
  'created_at',
  'updated_at',
  'steps',
  'requested_by',
  'metadata',
  'version',
  'conversation_id',
  'conversation_position',
  'agent_name',
  'agent_version',
  'owner',
  'parent_run_id',
]

/** The run index's indexes, by name, as the schema makes them. */
export const EVERY_INDEX = [
  'approvals_by_owner',
  'approvals_by_requested',
  'runs_by_agent',
  'runs_by_conversation',
  'runs_by_created',
  'runs_by_owner',
  'runs_by_parent',
  'runs_by_status',
]

/** The database's indexes of its own (not SQLite's automatic ones), sorted by name. */
export async function indexNames(db: D1Database): Promise<string[]> {
  const { results } = await db
    .prepare(
      `SELECT name FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'sqlite_%' ORDER BY name`,
    )
    .all<{ name: string }>()
  return results.map((r) => r.name)
}
