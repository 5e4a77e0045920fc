/**
 * A Durable Object's SQLite storage, simulated over node:sqlite, with the durability model the
 * simulator assumes (docs/architecture.md#deterministic-simulation):
 *
 * - Every write of a turn (one event and the promises it settles, up to the next real wait) is
 *   part of one implicit transaction, committed when the turn ends; this is the platform's
 *   automatic write coalescing, whether or not the writes ran inside `transactionSync`.
 * - `transactionSync(fn)` is a savepoint inside it: atomic (rolled back when `fn` throws), durable
 *   with the rest of the turn.
 * - The alarm is part of the same commit (`setAlarm` in a turn that is lost is lost too).
 * - A crash between turns loses nothing committed; a crash at a turn's end drops exactly that
 *   turn's writes and the output the turn held back (requests, RPC answers: the output gate).
 *
 * `breakage.loseCommit` makes it a broken platform for the self-check: one commit is silently
 * dropped while the turn's output still leaves.
 */
import { DatabaseSync, type SQLInputValue } from 'node:sqlite'
import type { Sim, TurnParticipant } from './sim'

export class SimSqlCursor<T> {
  constructor(readonly rows: T[]) {}
  toArray(): T[] {
    return this.rows
  }
  one(): T {
    if (this.rows.length !== 1) throw new Error(`expected one row, got ${this.rows.length}`)
    return this.rows[0]!
  }
  [Symbol.iterator](): Iterator<T> {
    return this.rows[Symbol.iterator]()
  }
}

export class SimObjectStorage implements TurnParticipant {
  readonly db = new DatabaseSync(':memory:')
  /** The committed alarm time, or null. */
  alarm: number | null = null
  #pendingAlarm: number | null | undefined
  #open = false
  #savepoints = 0
  #dropNext = false
  #dirty = false
  /** Commits that wrote something: what the checker's cached reads are keyed by. */
  version = 0
  readonly #peeks = new Map<string, ReturnType<DatabaseSync['prepare']>>()
  /** Set by the host: the alarm handler is running (getAlarm answers null, as the platform does). */
  alarmRunning = false
  readonly #statements = new Map<
    string,
    { stmt: ReturnType<DatabaseSync['prepare']>; rows: boolean; writes: boolean }
  >()
  /** Called after each commit (the host re-arms the alarm event). */
  onCommit: () => void = () => {}

  constructor(
    private readonly sim: Sim,
    readonly name: string,
  ) {
    sim.join(this)
  }

  begin(): void {
    this.db.exec('BEGIN')
    this.#open = true
  }

  commit(): void {
    if (!this.#open) return
    this.#open = false
    const dirty = this.#dirty
    this.#dirty = false
    if (this.#dropNext) {
      this.#dropNext = false
      this.db.exec('ROLLBACK')
      this.#pendingAlarm = undefined
      this.sim.log(`  BROKEN storage of ${this.name} dropped a committed turn`)
    } else {
      this.db.exec('COMMIT')
      if (dirty) this.version++
      if (this.#pendingAlarm !== undefined) this.alarm = this.#pendingAlarm
      this.#pendingAlarm = undefined
    }
    this.onCommit()
  }

  /** A crash at the turn's end: its writes are gone. */
  rollback(): void {
    if (!this.#open) return
    this.#open = false
    this.#dirty = false
    this.db.exec('ROLLBACK')
    this.#pendingAlarm = undefined
  }

  /** Self-check only: the next commit is lost although the platform reports it durable. */
  loseNextCommit(): void {
    this.#dropNext = true
  }

  /** Read-only look at committed rows (the checker's; not a platform call). */
  peek<T>(query: string, ...bindings: SQLInputValue[]): T[] {
    let stmt = this.#peeks.get(query)
    if (!stmt) {
      stmt = this.db.prepare(query)
      this.#peeks.set(query, stmt)
    }
    return stmt.all(...bindings) as T[]
  }

  readonly sql = {
    exec: <T = Record<string, SqlStorageValue>>(query: string, ...bindings: unknown[]) => {
      this.sim.activity++
      this.#needTurn()
      let prepared = this.#statements.get(query)
      if (!prepared) {
        // DDL goes through exec each time; the rest is prepared once.
        if (/^\s*CREATE\s/i.test(query)) {
          this.#dirty = true
          this.db.exec(query)
          return new SimSqlCursor<T>([])
        }
        const stmt = this.db.prepare(query)
        prepared = { stmt, rows: stmt.columns().length > 0, writes: !/^\s*SELECT/i.test(query) }
        this.#statements.set(query, prepared)
      }
      if (prepared.writes) this.#dirty = true
      const args = bindings.map(toSqlite)
      if (!prepared.rows) {
        prepared.stmt.run(...args)
        return new SimSqlCursor<T>([])
      }
      return new SimSqlCursor<T>(prepared.stmt.all(...args) as T[])
    },
    get databaseSize(): number {
      return 0
    },
  }

  transactionSync<T>(fn: () => T): T {
    this.sim.activity++
    this.#needTurn()
    const name = `sp${++this.#savepoints}`
    this.db.exec(`SAVEPOINT ${name}`)
    try {
      const out = fn()
      this.db.exec(`RELEASE ${name}`)
      return out
    } catch (err) {
      this.db.exec(`ROLLBACK TO ${name}`)
      this.db.exec(`RELEASE ${name}`)
      throw err
    } finally {
      this.#savepoints--
    }
  }

  async getAlarm(): Promise<number | null> {
    this.sim.activity++
    if (this.#pendingAlarm !== undefined) return this.#pendingAlarm
    return this.alarmRunning ? null : this.alarm
  }

  async setAlarm(at: number | Date): Promise<void> {
    this.sim.activity++
    this.#needTurn()
    this.#dirty = true
    this.#pendingAlarm = typeof at === 'number' ? at : at.getTime()
  }

  async deleteAlarm(): Promise<void> {
    this.sim.activity++
    this.#needTurn()
    this.#dirty = true
    this.#pendingAlarm = null
  }

  /** Storage is used only inside turns: anything else is a simulator bug, said loudly. */
  #needTurn(): void {
    if (!this.#open) throw new Error(`storage of ${this.name} used outside a turn`)
  }
}

function toSqlite(v: unknown): SQLInputValue {
  if (v === undefined) return null
  if (typeof v === 'boolean') return v ? 1 : 0
  return v as SQLInputValue
}
