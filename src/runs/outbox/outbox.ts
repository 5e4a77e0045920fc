import { redact } from '../../security/redact'

/**
 * Notifications a run owes the outside world (the signed callback, Slack messages), stored in
 * the same transaction as the state change that caused them and delivered by alarm with
 * backoff. A delivery failure never blocks or breaks the run; its status is visible on the run.
 */
import { DeliveryError } from '../../errors/delivery-error'
import type { DeliveryStatus } from '../../api/enums'
import type {
  OutboxEntry,
  OutboxEntryOf,
  OutboxKind,
  OutboxPayload,
  OutboxResult,
} from './outbox-kinds'

export type { OutboxEntry, OutboxEntryOf, OutboxKind } from './outbox-kinds'
export type OutboxStatus = DeliveryStatus

export const MAX_DELIVERY_ATTEMPTS = 8
const BASE_DELAY_MS = 2_000
const MAX_DELAY_MS = 10 * 60_000
const NEVER_GIVE_UP = new Set<OutboxKind>(['index', 'forget.index', 'forget.slack'])

type Row = {
  id: string
  kind: OutboxKind
  payload: string
  status: OutboxStatus
  attempts: number
  next_at: number
  last_error: string | null
  updated_at: number
  result: string | null
}

export class Outbox {
  /** Writes held back until the run's next write (`later`). */
  #later: (() => void)[] = []
  /**
   * The status of entries as this outbox last wrote or read them, so that `rearm` of an entry
   * still pending (the run index's, at each step) reads nothing (a read a transition:
   * docs/development.md#worker-cpu-per-run-beside-the-peer). `forget` empties it.
   */
  readonly #status = new Map<string, OutboxStatus>()
  /**
   * The table was created empty for this object (a new run): every entry in it is one this
   * outbox wrote, so `#status` knows them all and a re-arm of an entry it lacks reads nothing.
   */
  #complete = false

  constructor(
    private readonly sql: SqlStorage,
    private readonly random: () => number = Math.random,
  ) {}

  /**
   * Holds `write` back until the next statement of this outbox or `flush()`, which the run's
   * next write transaction makes first: it goes into that transaction's commit instead of a
   * commit of its own. Only for a write whose loss is harmless (the object dying first leaves
   * the entry pending, and it is delivered again): the run index's mark after its row was
   * written (docs/development.md#the-peer-bench). Every read and write here flushes first, so
   * nothing reads the outbox without it.
   */
  later(write: () => void): void {
    this.#later.push(write)
  }

  /** Reads every entry's status from the table again (a transaction rolled back, a wipe). */
  forget(): void {
    this.#status.clear()
    this.#complete = false
  }

  /** The table was just created, empty: every entry it will hold is written here. */
  startsEmpty(): void {
    this.#status.clear()
    this.#complete = true
  }

  /** Makes the writes `later` holds back, now. */
  flush(): void {
    if (!this.#later.length) return
    const writes = this.#later
    this.#later = []
    for (const write of writes) write()
  }

  /** Adds a delivery unless one with this id exists (ids are deterministic: enqueue is idempotent). */
  enqueue<K extends OutboxKind>(id: string, kind: K, payload: OutboxPayload<K>, now: number): void {
    this.flush()
    this.sql.exec(
      `INSERT OR IGNORE INTO outbox (id, kind, payload, status, attempts, next_at, updated_at)
       VALUES (?, ?, ?, 'pending', 0, ?, ?)`,
      id,
      kind,
      JSON.stringify(payload),
      now,
      now,
    )
    // Added, or one with this id was there: its status is read when asked (a table this
    // outbox saw created has it only if written here: else it is the one just added).
    if (!this.#complete) this.#status.delete(id)
    else if (!this.#status.has(id)) this.#status.set(id, 'pending')
  }

  /**
   * Adds a delivery, or makes a finished one with this id due again: one entry that always
   * carries the latest state (the run index). A pending one is left as it is (it keeps its
   * attempts and backoff, and is delivered from the run as it is when its turn comes: nothing
   * to write, measured at two writes of a two-call run, docs/development.md#the-peer-bench); a
   * delivered one is due again no sooner than `minGapMs` after it was delivered (a rate limit).
   */
  rearm<K extends OutboxKind>(
    id: string,
    kind: K,
    payload: OutboxPayload<K>,
    now: number,
    minGapMs = 0,
  ): void {
    this.flush()
    const status =
      this.#status.get(id) ??
      (this.#complete
        ? undefined
        : this.sql
            .exec<{ status: OutboxStatus }>('SELECT status FROM outbox WHERE id = ?', id)
            .toArray()[0]?.status)
    if (status === 'pending') {
      this.#status.set(id, status)
      return
    }
    this.sql.exec(
      `INSERT INTO outbox (id, kind, payload, status, attempts, next_at, updated_at)
       VALUES (?, ?, ?, 'pending', 0, ?, ?)
       ON CONFLICT (id) DO UPDATE SET
         attempts = 0,
         next_at = CASE WHEN status = 'delivered' THEN MAX(excluded.next_at, updated_at + ?)
           ELSE excluded.next_at END,
         last_error = NULL, status = 'pending', updated_at = excluded.updated_at`,
      id,
      kind,
      JSON.stringify(payload),
      now,
      now,
      minGapMs,
    )
    this.#status.set(id, 'pending')
  }

  /**
   * A pending delivery that only waits out its gap (no failed attempt yet) is due at `at`
   * instead: the last message of something need not wait for the gap that spaces its updates.
   */
  hasten(id: string, at: number): void {
    this.flush()
    this.sql.exec(
      `UPDATE outbox SET next_at = MIN(next_at, ?) WHERE id = ? AND status = 'pending' AND attempts = 0`,
      at,
      id,
    )
  }

  /** The entry `id` of kind `kind` (an id fixes its kind; by default it is the kind's name). */
  get<K extends OutboxKind>(kind: K, id: string = kind): OutboxEntryOf<K> | undefined {
    this.flush()
    const row = this.sql.exec<Row>('SELECT * FROM outbox WHERE id = ?', id).toArray()[0]
    const entry = row && toEntry(row)
    return entry && isOf(entry, kind) ? entry : undefined
  }

  due(now: number): OutboxEntry[] {
    this.flush()
    return this.sql
      .exec<Row>(
        `SELECT * FROM outbox WHERE status = 'pending' AND next_at <= ? ORDER BY next_at, id`,
        now,
      )
      .toArray()
      .map(toEntry)
  }

  nextDue(): number | undefined {
    this.flush()
    const row = this.sql
      .exec<{ t: number | null }>(`SELECT MIN(next_at) AS t FROM outbox WHERE status = 'pending'`)
      .toArray()[0]
    return row?.t ?? undefined
  }

  delivered(id: string, now: number, result?: OutboxResult): void {
    this.flush()
    this.sql.exec(
      `UPDATE outbox SET status = 'delivered', attempts = attempts + 1, updated_at = ?, last_error = NULL,
       result = ? WHERE id = ?`,
      now,
      result === undefined ? null : JSON.stringify(result),
      id,
    )
    this.#status.set(id, 'delivered')
  }

  failed(entry: OutboxEntry, now: number, error: DeliveryError | Error): void {
    this.flush()
    const attempts = entry.attempts + 1
    const retryable = !(error instanceof DeliveryError) || error.retryable
    // The run index never gives up: a run missing from it would be lost to GET /v1/runs, and a
    // deleted run's removals must all happen.
    const giveUp =
      !NEVER_GIVE_UP.has(entry.kind) && (!retryable || attempts >= MAX_DELIVERY_ATTEMPTS)
    // Exponential backoff with full jitter, or the server's Retry-After when it gave one.
    const backoff = Math.min(MAX_DELAY_MS, BASE_DELAY_MS * 2 ** (attempts - 1))
    const delay =
      error instanceof DeliveryError && error.retryAfterMs !== undefined
        ? Math.min(MAX_DELAY_MS, error.retryAfterMs)
        : Math.round(backoff / 2 + (this.random() * backoff) / 2)
    this.sql.exec(
      `UPDATE outbox SET status = ?, attempts = ?, next_at = ?, last_error = ?, updated_at = ? WHERE id = ?`,
      giveUp ? 'failed' : 'pending',
      attempts,
      now + delay,
      redact(error.message).slice(0, 500),
      now,
      entry.id,
    )
    this.#status.set(entry.id, giveUp ? 'failed' : 'pending')
  }

  list(): OutboxEntry[] {
    this.flush()
    return this.sql.exec<Row>('SELECT * FROM outbox ORDER BY updated_at, id').toArray().map(toEntry)
  }
}

function isOf<K extends OutboxKind>(entry: OutboxEntry, kind: K): entry is OutboxEntryOf<K> {
  return entry.kind === kind
}

/** A stored row as an entry: the row's kind names what its JSON holds (`OutboxKinds`). */
function toEntry(row: Row): OutboxEntry {
  return {
    id: row.id,
    kind: row.kind,
    payload: JSON.parse(row.payload),
    status: row.status,
    attempts: row.attempts,
    nextAt: row.next_at,
    updatedAt: row.updated_at,
    ...(row.last_error ? { lastError: row.last_error } : {}),
    ...(row.result ? { result: JSON.parse(row.result) } : {}),
  }
}
