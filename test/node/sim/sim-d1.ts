/**
 * The run index's D1 database, simulated: node:sqlite serves the SQL; each call is a trip over
 * the network (an event of its own) that a schedule may lose on the way there or back.
 */
import { DatabaseSync, type SQLInputValue } from 'node:sqlite'
import type { Sim } from './sim'

type Op = (db: DatabaseSync) => unknown

export class SimD1 {
  readonly db = new DatabaseSync(':memory:')
  /** Calls that reached the database (the crash points' fingerprint counts them). */
  readonly stats = { executed: 0 }
  constructor(private readonly sim: Sim) {}

  prepare(query: string): SimD1Statement {
    return new SimD1Statement(this, query, [])
  }

  batch(statements: SimD1Statement[]): Promise<unknown[]> {
    return this.call('batch', (db) => {
      db.exec('BEGIN')
      try {
        const out = statements.map((s) => s.execute(db))
        db.exec('COMMIT')
        return out
      } catch (err) {
        db.exec('ROLLBACK')
        throw err
      }
    })
  }

  /** One round trip: sent once the turn commits, executed on arrival, answered a moment later. */
  call<T>(what: string, op: Op): Promise<T> {
    const sim = this.sim
    const owner = sim.current
    sim.activity++
    return new Promise<T>((resolve, reject) => {
      sim.afterCommit(() =>
        sim.schedule(
          `d1 ${what} arrives`,
          1,
          () => {
            if (sim.fault('net', `d1 ${what} lost on the way`)) {
              sim.schedule(
                'd1 error',
                1,
                () => reject(new Error('D1_ERROR: network connection lost')),
                owner,
              )
              return
            }
            this.stats.executed++
            let out: unknown
            let error: Error | undefined
            try {
              out = op(this.db)
            } catch (err) {
              error = err as Error
            }
            const lostAnswer = sim.fault('net', `d1 ${what} answer lost`)
            sim.schedule(
              `d1 ${what} answered`,
              1,
              () => {
                if (lostAnswer) reject(new Error('D1_ERROR: network connection lost'))
                else if (error) reject(error)
                else resolve(out as T)
              },
              owner,
            )
          },
          owner,
        ),
      )
    })
  }
}

const STATEMENTS = new WeakMap<
  DatabaseSync,
  Map<string, { stmt: ReturnType<DatabaseSync['prepare']>; rows: boolean }>
>()

export class SimD1Statement {
  constructor(
    private readonly d1: SimD1,
    readonly query: string,
    readonly args: unknown[],
  ) {}

  bind(...args: unknown[]): SimD1Statement {
    return new SimD1Statement(this.d1, this.query, args)
  }

  execute(db: DatabaseSync): { results: unknown[]; success: true; meta: Record<string, number> } {
    let prepared = STATEMENTS.get(db)?.get(this.query)
    if (!prepared) {
      const stmt = db.prepare(this.query)
      prepared = { stmt, rows: stmt.columns().length > 0 }
      if (!STATEMENTS.has(db)) STATEMENTS.set(db, new Map())
      STATEMENTS.get(db)!.set(this.query, prepared)
    }
    const { stmt } = prepared
    const args = this.args.map((a) => (a === undefined ? null : (a as SQLInputValue)))
    if (!prepared.rows) {
      const r = stmt.run(...args)
      return { results: [], success: true, meta: { changes: Number(r.changes) } }
    }
    return { results: stmt.all(...args), success: true, meta: { changes: 0 } }
  }

  run(): Promise<unknown> {
    return this.d1.call('run', (db) => this.execute(db))
  }

  all(): Promise<unknown> {
    return this.d1.call('all', (db) => this.execute(db))
  }

  first(): Promise<unknown> {
    return this.d1.call('first', (db) => this.execute(db).results[0] ?? null)
  }

  raw(): Promise<unknown> {
    return this.d1.call('raw', (db) =>
      this.execute(db).results.map((r) => Object.values(r as object)),
    )
  }
}
