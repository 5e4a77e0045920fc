import type { NewRunEvent, RunEvent } from './events'

const SCHEMA = `CREATE TABLE IF NOT EXISTS event (
  seq INTEGER PRIMARY KEY, type TEXT NOT NULL, data TEXT NOT NULL, at INTEGER NOT NULL)`

/** Rows per INSERT: four parameters each, and a statement binds at most 100. */
const EVENTS_PER_INSERT = 25

/** An event as stored: `data` is its JSON text, `at` milliseconds since the epoch. */
export type EventRow = { seq: number; type: string; data: string; at: number }

/**
 * The run's events, one SQLite row each (docs/architecture.md#events). `append` runs inside the transaction that
 * saves the transition, so an event exists exactly when its transition does, whichever instance
 * of the object later serves the stream.
 */
export class EventLog {
  #ready: boolean
  /** The newest sequence number, once read or written (undefined: read it from the table). */
  #last: number | undefined
  /** The newest event's time, once read or written with `#last` (undefined: read it). */
  #lastAt: number | undefined

  /** `tableExists`: whether the table exists, when the caller has just looked (else read here). */
  constructor(
    private readonly sql: SqlStorage,
    private readonly runId: () => string,
    tableExists?: boolean,
  ) {
    this.#ready = tableExists ?? this.#tableExists()
  }

  /** Reading an unknown run must not create tables: whether the first write made it. */
  #tableExists(): boolean {
    return (
      this.sql
        .exec(`SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'event'`)
        .toArray().length > 0
    )
  }

  /** Stores events after the last one; returns the last sequence number. */
  append(events: NewRunEvent[], now: number): number {
    if (!this.#ready) {
      this.sql.exec(SCHEMA)
      this.#ready = true
      this.#last = 0
    }
    let seq = this.lastSeq()
    // One statement for a transition's events (measured: 40 → 35 SQL writes in a two-call run,
    // docs/development.md#the-peer-bench), in chunks that stay under the bound-parameter limit.
    for (let i = 0; i < events.length; i += EVENTS_PER_INSERT) {
      const chunk = events.slice(i, i + EVENTS_PER_INSERT)
      const args = chunk.flatMap((e) => [++seq, e.type, JSON.stringify(e.data), now])
      const rows = chunk.map(() => '(?, ?, ?, ?)').join(', ')
      this.sql.exec(`INSERT INTO event (seq, type, data, at) VALUES ${rows}`, ...args)
    }
    this.#last = seq
    this.#lastAt = now
    return seq
  }

  /**
   * The sequence number of the newest event, 0 before the first: read from the table once, then
   * kept as `append` moves it (a read a transition: docs/development.md#worker-cpu-per-run-beside-the-peer).
   * A transaction that rolls back calls `forget`, so its numbers are not skipped.
   */
  lastSeq(): number {
    if (!this.#ready) return 0
    if (this.#last !== undefined) return this.#last
    const row = this.sql.exec<{ n: number | null }>('SELECT MAX(seq) AS n FROM event').toArray()[0]
    this.#last = row?.n ?? 0
    return this.#last
  }

  /** Reads the table's state again (a transaction rolled back, or the run was wiped). */
  forget(): void {
    this.#ready = this.#tableExists()
    this.#last = undefined
    this.#lastAt = undefined
  }

  /** Stored rows with `seq > after`, oldest first, at most `limit`: what streams send as is. */
  rowsAfter(after: number, limit: number): EventRow[] {
    if (!this.#ready) return []
    return this.sql
      .exec<EventRow>('SELECT * FROM event WHERE seq > ? ORDER BY seq LIMIT ?', after, limit)
      .toArray()
  }

  /** Events with `seq > after`, oldest first, at most `limit`. */
  after(after: number, limit = 1_000): RunEvent[] {
    return this.rowsAfter(after, limit).map(
      (r) =>
        ({
          seq: r.seq,
          runId: this.runId(),
          type: r.type,
          at: new Date(r.at).toISOString(),
          data: JSON.parse(r.data),
        }) as RunEvent,
    )
  }

  /**
   * The newest event's sequence number and time (ms since the epoch), without its data: what
   * the run index's row is versioned and dated by. Read once, then kept as `append` moves it
   * (each index write read it: docs/development.md#worker-cpu-per-run-beside-the-peer).
   */
  newest(): { seq: number; at: number } | undefined {
    if (!this.#ready) return undefined
    if (this.#last === 0) return undefined
    if (this.#last !== undefined && this.#lastAt !== undefined) {
      return { seq: this.#last, at: this.#lastAt }
    }
    const row = this.sql
      .exec<{ seq: number; at: number }>('SELECT seq, at FROM event ORDER BY seq DESC LIMIT 1')
      .toArray()[0]
    this.#last = row?.seq ?? 0
    this.#lastAt = row?.at
    return row
  }

  /** One event by sequence number (callback deliveries). */
  get(seq: number): RunEvent | undefined {
    return this.after(seq - 1, 1)[0]
  }
}
