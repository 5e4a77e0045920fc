import { parseRunState, type RunState, type Step } from '../kernel/state'

/**
 * The run's SQLite tables (docs/architecture.md#budgets-and-edge-limits): the state without its steps in one small row, and each
 * step in a row of its own, so a transition writes the same few bytes at step 100 as at step 10.
 */
export const SCHEMA = [
  `CREATE TABLE IF NOT EXISTS run (k TEXT PRIMARY KEY, v TEXT NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS step (i INTEGER PRIMARY KEY, json TEXT NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS outbox (
     id TEXT PRIMARY KEY, kind TEXT NOT NULL, payload TEXT NOT NULL, status TEXT NOT NULL,
     attempts INTEGER NOT NULL DEFAULT 0, next_at INTEGER NOT NULL, last_error TEXT,
     updated_at INTEGER NOT NULL, result TEXT)`,
]

/**
 * Made by the first stored observation only: most runs store none (a tool's output is kept
 * whole in its step unless it is long), and a table no run writes would cost each new run a
 * write (docs/development.md#the-peer-bench).
 */
const OBSERVATION_SCHEMA = `CREATE TABLE IF NOT EXISTS observation (
  handle TEXT PRIMARY KEY, text TEXT NOT NULL)`

/** A stored observation must fit a 2 MB row; tools cap their output well below this. */
export const MAX_STORED_OBSERVATION = 1_500_000

export class RunStorage {
  #lastStep: { i: number; json: string } | undefined
  #lastMeta: string | undefined
  /** A follow-up's conversation is written once: it never changes after the run is created. */
  #conversationSaved = false
  /** So is the run's agent snapshot (its instructions and output schema may be long). */
  #agentSaved = false

  #ready = false
  #observationsReady = false
  /** Whether the event log's table exists, as the first look at the tables found it. */
  #eventsReady = false
  /**
   * The tables were created by this object and every row of the run table since is one it
   * wrote: a key it has not written is absent, without a read (a new run reads `blocked`,
   * `mcp_tools` and `cancel`, none of which it has: docs/development.md#worker-cpu-per-run-beside-the-peer).
   */
  #complete = false
  /**
   * The run table's rows as last read or written here (their JSON; null: no such row): a
   * slice reads the same few keys again and again, most of them absent (a run's `blocked`,
   * `cancel`, `mcp_tools`: docs/development.md#worker-cpu-per-run-beside-the-peer). Only this
   * object writes the table but for a wipe, after which `forget` empties it.
   */
  readonly #values = new Map<string, string | null>()

  constructor(private readonly sql: SqlStorage) {
    this.#readTables()
  }

  /**
   * Which of the tables exist: reading an unknown run must not make them. The event log's table
   * is looked for in the same read (`hasEventTable`): one statement for the object's start.
   */
  #readTables(): void {
    const tables = new Set(
      this.sql
        .exec<{ name: string }>(
          `SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('run', 'observation', 'event')`,
        )
        .toArray()
        .map((r) => r.name),
    )
    this.#ready = tables.has('run')
    this.#observationsReady = tables.has('observation')
    this.#eventsReady = tables.has('event')
    this.#complete = false
  }

  /** Whether the event log's table existed when the tables were last read (runs/events/event-log.ts). */
  get hasEventTable(): boolean {
    return this.#eventsReady
  }

  /**
   * Forgets what this object knows of the stored rows (a transaction rolled back, a wipe): the
   * next reads go to the table, the next save writes the state, its last step, the agent and
   * the conversation again.
   */
  forget(): void {
    this.#readTables()
    this.#values.clear()
    this.#lastStep = undefined
    this.#lastMeta = undefined
    this.#agentSaved = false
    this.#conversationSaved = false
  }

  /**
   * Creates the tables (idempotent); every write path calls it first. True when this call
   * created them: they hold nothing yet (the outbox's, too: `Outbox.startsEmpty`).
   */
  ensureSchema(): boolean {
    if (this.#ready) return false
    for (const ddl of SCHEMA) this.sql.exec(ddl)
    this.#ready = true
    this.#complete = true
    return true
  }

  getValue<T>(key: string): T | undefined {
    if (!this.#ready) return undefined
    let json = this.#values.get(key)
    if (json === undefined && this.#complete) return undefined
    if (json === undefined) {
      const row = this.sql.exec<{ v: string }>('SELECT v FROM run WHERE k = ?', key).toArray()[0]
      json = row?.v ?? null
      this.#values.set(key, json)
    }
    // Parsed anew each time: a caller may change what it gets.
    return json === null ? undefined : (JSON.parse(json) as T)
  }

  setValue(key: string, value: unknown): void {
    this.ensureSchema()
    const json = JSON.stringify(value)
    this.sql.exec('INSERT OR REPLACE INTO run (k, v) VALUES (?, ?)', key, json)
    this.#values.set(key, json)
  }

  loadState(): RunState | undefined {
    const meta = this.getValue<Omit<RunState, 'steps'>>('state')
    if (!meta) return undefined
    // Its own row (see saveState); absent for runs that continue nothing and older versions.
    const conversation = this.getValue<RunState['conversation']>('conversation')
    this.#conversationSaved = conversation !== undefined
    // Its own row too; absent for states saved before agents (the migration adds the default).
    const agent = this.getValue<RunState['agent']>('agent')
    this.#agentSaved = agent !== undefined
    const steps = this.sql
      .exec<{ json: string }>('SELECT json FROM step ORDER BY i')
      .toArray()
      .map((r) => JSON.parse(r.json) as Step)
    const parsed = parseRunState({
      ...meta,
      conversation: conversation ?? null,
      ...(agent ? { agent } : {}),
      steps,
    })
    if (!parsed.ok) throw new Error(`run storage is corrupt: ${parsed.error}`)
    this.#lastMeta = JSON.stringify(meta)
    const last = steps.at(-1)
    if (last) this.#lastStep = { i: last.i, json: JSON.stringify(last) }
    return parsed.state
  }

  /**
   * Writes what a transition changed: the state row, and the last step's row when it changed.
   * The kernel only ever changes the last step, so earlier rows are never rewritten. `values`:
   * other rows of the run table written with the state (a new run's info), in the same
   * statement as its rows (measured: one statement instead of three for a new run,
   * docs/development.md#the-peer-bench).
   */
  saveState(state: RunState, values: Record<string, unknown> = {}): number {
    this.ensureSchema()
    // The conversation (up to maxHistoryTokens of history) and the agent's snapshot are not
    // rewritten with every transition: each has a row of its own, written with the first state.
    const { steps, conversation, agent, ...meta } = state
    const rows: [string, string][] = Object.entries(values).map(([k, v]) => [k, JSON.stringify(v)])
    if (!this.#agentSaved) rows.push(['agent', JSON.stringify(agent)])
    if (conversation && !this.#conversationSaved) {
      rows.push(['conversation', JSON.stringify(conversation)])
    }
    const metaJson = JSON.stringify(meta)
    if (metaJson !== this.#lastMeta) rows.push(['state', metaJson])
    let written = 0
    if (rows.length) {
      const places = rows.map(() => '(?, ?)').join(', ')
      this.sql.exec(`INSERT OR REPLACE INTO run (k, v) VALUES ${places}`, ...rows.flat())
      for (const [k, json] of rows) this.#values.set(k, json)
      this.#agentSaved = true
      if (conversation) this.#conversationSaved = true
      this.#lastMeta = metaJson
      for (const [, json] of rows) written += json.length
    }
    const last = steps.at(-1)
    if (last) {
      const json = JSON.stringify(last)
      if (this.#lastStep?.i !== last.i || this.#lastStep.json !== json) {
        this.sql.exec('INSERT OR REPLACE INTO step (i, json) VALUES (?, ?)', last.i, json)
        this.#lastStep = { i: last.i, json }
        written += json.length
      }
    }
    return written
  }

  putObservation(handle: string, text: string): void {
    this.ensureSchema()
    if (!this.#observationsReady) {
      this.sql.exec(OBSERVATION_SCHEMA)
      this.#observationsReady = true
    }
    const stored =
      text.length > MAX_STORED_OBSERVATION
        ? `${text.slice(0, MAX_STORED_OBSERVATION)}\n…[stored copy cut at ${MAX_STORED_OBSERVATION} of ${text.length} characters]`
        : text
    this.sql.exec('INSERT OR REPLACE INTO observation (handle, text) VALUES (?, ?)', handle, stored)
  }

  /** Every stored observation's handle, in order. */
  observationHandles(): string[] {
    if (!this.#observationsReady) return []
    return this.sql
      .exec<{ handle: string }>('SELECT handle FROM observation ORDER BY handle')
      .toArray()
      .map((r) => r.handle)
  }

  getObservation(handle: string): string | undefined {
    if (!this.#observationsReady) return undefined
    return this.sql
      .exec<{ text: string }>('SELECT text FROM observation WHERE handle = ?', handle)
      .toArray()[0]?.text
  }
}
