/**
 * Watches one run's Durable Object storage from the test, with no hook in the production class.
 * Through `runInDurableObject` it wraps the running object's own storage handles:
 * - `sql.exec`, to count the bytes the run's state saves write (the `state` row and `step` rows),
 * - `transactionSync`, in which every change of the run is saved, to act right after a chosen
 *   change is stored and before the slice goes on (move the clock, copy the rows).
 * A killed object comes back with fresh handles: watch the run again after a kill.
 */
import { runInDurableObject } from 'cloudflare:test'
import type { RunState } from '../../src/kernel/state'
import { stubOf } from './harness'

/** The run as its rows hold it right after a save. */
export type SavedRun = Pick<RunState, 'phase' | 'steps' | 'result' | 'modelCall'>

/** One saved change: the run before and after the transaction. */
export interface SavedChange {
  before: SavedRun | undefined
  after: SavedRun
}

export type ChangeMatch = (change: SavedChange) => boolean

export interface RunWatch {
  /** Bytes written by state saves since the watch began. */
  bytesWritten(): number
  /** Steps stored now. */
  steps(): Promise<number>
  /** Runs `action` once, right after the first saved change `match` accepts. */
  once(match: ChangeMatch, action: () => void): { fired: () => boolean }
  /** Runs `action` after every saved change `match` accepts. */
  each(match: ChangeMatch, action: () => void): void
}

type Hook = { match: ChangeMatch; action: () => void; once: boolean; fired: boolean }

const watches = new WeakMap<SqlStorage, RunWatch>()

/** The watch of the run's current object, begun at the first call (see the file comment). */
export async function watchRun(id: string): Promise<RunWatch> {
  const existing = await runInDurableObject(stubOf(id), (_instance, state) =>
    watches.get(state.storage.sql),
  )
  if (existing) return existing
  const hooks: Hook[] = []
  let bytes = 0
  let sql!: SqlStorage
  let read!: () => SavedRun | undefined
  let last: SavedRun | undefined
  await runInDurableObject(stubOf(id), (_instance, state) => {
    sql = state.storage.sql
    const exec = sql.exec.bind(sql)
    read = () => {
      const meta = exec<{ v: string }>("SELECT v FROM run WHERE k = 'state'").toArray()[0]
      if (!meta) return undefined
      const steps = exec<{ json: string }>('SELECT json FROM step ORDER BY i')
        .toArray()
        .map((r) => JSON.parse(r.json) as RunState['steps'][number])
      return { ...(JSON.parse(meta.v) as Omit<SavedRun, 'steps'>), steps }
    }
    // What RunStorage.saveState writes: the `state` row and the step rows (not `info`, events).
    const counted: typeof sql.exec = (query, ...bindings) => {
      if (/^INSERT OR REPLACE INTO step\b/.test(query) && typeof bindings[1] === 'string') {
        bytes += bindings[1].length
      } else if (/^INSERT OR REPLACE INTO run\b/.test(query) && bindings[0] === 'state') {
        bytes += String(bindings[1]).length
      }
      return exec(query, ...bindings)
    }
    Object.assign(sql, { exec: counted })
    const storage = state.storage
    const transaction = storage.transactionSync.bind(storage)
    Object.assign(storage, {
      transactionSync: <T>(fn: () => T): T => {
        const out = transaction(fn)
        const after = read()
        if (after) {
          const change = { before: last, after }
          last = after
          for (const hook of hooks) {
            if ((hook.once && hook.fired) || !hook.match(change)) continue
            hook.fired = true
            hook.action()
          }
        }
        return out
      },
    })
    last = read()
  })
  const watch: RunWatch = {
    bytesWritten: () => bytes,
    steps: async () => {
      const n = await runInDurableObject(stubOf(id), (_instance, state) => {
        if (state.storage.sql !== sql) throw new Error(`run ${id} restarted since it was watched`)
        return state.storage.sql.exec<{ n: number }>('SELECT count(*) AS n FROM step').one().n
      })
      return n
    },
    once(match, action) {
      const hook = { match, action, once: true, fired: false }
      hooks.push(hook)
      return { fired: () => hook.fired }
    },
    each(match, action) {
      hooks.push({ match, action, once: false, fired: false })
    },
  }
  watches.set(sql, watch)
  return watch
}

/** Changes by what the transition did, read from the stored run (not from log lines). */
export const saved = {
  /** The model's reply for step `i` was recorded. */
  think:
    (i: number): ChangeMatch =>
    ({ before, after }) =>
      (before?.steps.length ?? 0) <= i && after.steps.length > i,
  /** A call of `tool` (any tool when omitted) got its result. */
  ranCall:
    (tool?: string): ChangeMatch =>
    ({ before, after }) =>
      changedCalls(before, after).some((c) => c.status === 'done' && (!tool || c.name === tool)),
  /** A side-effecting call was recorded as started, before it runs. */
  startedCall:
    (): ChangeMatch =>
    ({ before, after }) =>
      changedCalls(before, after).some((c) => c.status === 'started'),
  /** The record of step `i`'s model call was written, before the call is made. */
  modelCallStarted:
    (i: number): ChangeMatch =>
    ({ before, after }) =>
      before?.modelCall?.step !== i && after.modelCall?.step === i,
  /** The run ended with this stop reason. */
  finished:
    (stopReason: string): ChangeMatch =>
    ({ before, after }) =>
      !before?.result && after.result?.stopReason === stopReason,
}

/** Calls of the last step whose status differs from what the run held before. */
function changedCalls(before: SavedRun | undefined, after: SavedRun) {
  const step = after.steps.at(-1)
  if (!step) return []
  const earlier = before?.steps.find((s) => s.i === step.i)
  return step.calls.filter(
    (call) => earlier?.calls.find((c) => c.id === call.id)?.status !== call.status,
  )
}
