/**
 * A run's object keeps what it last read or wrote of its tables (the state row, the run table's
 * values, the newest event number, the outbox entries' statuses) so that a transition reads and
 * writes no more than it changes. A transaction that rolls back undoes the rows, not what was
 * kept: the next write must still write what the tables lack, and number events without a gap.
 */
import { env, runInDurableObject } from 'cloudflare:test'
import { describe, expect, it } from 'vitest'
import { DEFAULT_BUDGET } from '../../src/kernel/budget'
import type { Step } from '../../src/kernel/state'
import type { TransitionEvent } from '../../src/kernel/transition'
import { EventLog } from '../../src/runs/events/event-log'
import { Outbox } from '../../src/runs/outbox/outbox'
import { RunRecord } from '../../src/runs/run-record'
import { RunStorage } from '../../src/runs/storage'
import type { StartInput } from '../../src/runs/types'
import { stubOf } from '../service/harness'

// Ids of their own: other files of this project use the zero-padded ones.
const runId = (n: number) => `run_${String(n).padStart(32, 'b')}`

const input = (id: string): StartInput => ({
  id,
  task: 'Say hello.',
  tools: [],
  budget: DEFAULT_BUDGET,
  protocol: 'native',
  policy: { mode: 'ask' },
  requestedBy: 'api',
  owner: null,
})

const event = (id: string): TransitionEvent => ({
  runId: id,
  phase: 'think',
  action: 'think',
  step: null,
  tool: null,
  callId: null,
  ms: 0,
  promptTokens: null,
  completionTokens: null,
  stopReason: null,
  bytes: 0,
})

/** A step that cannot be stored: its JSON throws after the state row of its save is written. */
const unstorable = {
  toJSON: () => {
    throw new Error('unstorable step')
  },
} as unknown as Step

class Undone extends Error {}

/** Runs `write` in a transaction that rolls back. */
function rolledBack(storage: DurableObjectStorage, write: () => void): void {
  expect(() =>
    storage.transactionSync(() => {
      write()
      throw new Undone()
    }),
  ).toThrow(Undone)
}

describe('a transaction that rolls back', () => {
  it('leaves a run whose next save writes the state the tables lack', async () => {
    const id = runId(1)
    const reloaded = await runInDurableObject(stubOf(id), (_instance, state) => {
      const record = new RunRecord(state.storage, env)
      const { state: created } = record.create(input(id), 1_000)
      const moved = { ...created, activeMs: created.activeMs + 25 }
      // The state row is written, then the step's JSON throws: the whole save is undone.
      expect(() => record.persist({ ...moved, steps: [unstorable] }, event(id))).toThrow(
        'unstorable step',
      )
      record.persist(moved, event(id))
      return new RunRecord(state.storage, env).state
    })
    expect(reloaded?.activeMs).toBe(25)
  })

  it('leaves the event numbers without a gap once the log forgets', async () => {
    const id = runId(2)
    const seqs = await runInDurableObject(stubOf(id), (_instance, state) => {
      const log = new EventLog(state.storage.sql, () => id)
      const started = (step: number) => ({ type: 'step_started' as const, data: { step } })
      expect(log.append([started(0)], 1_000)).toBe(1)
      rolledBack(state.storage, () => expect(log.append([started(1)], 2_000)).toBe(2))
      log.forget()
      expect(log.lastSeq()).toBe(1)
      expect(log.append([started(1)], 3_000)).toBe(2)
      return log.after(0).map((e) => e.seq)
    })
    expect(seqs).toEqual([1, 2])
  })

  it('leaves an outbox whose next re-arm makes the entry due again', async () => {
    const id = runId(3)
    const status = await runInDurableObject(stubOf(id), (_instance, state) => {
      new RunStorage(state.storage.sql).ensureSchema()
      const outbox = new Outbox(state.storage.sql)
      outbox.rearm('index', 'index', {}, 1_000)
      outbox.delivered('index', 1_100)
      // Kept as delivered: a re-arm now writes (and is kept as pending), but it is undone.
      rolledBack(state.storage, () => outbox.rearm('index', 'index', {}, 1_200))
      outbox.forget()
      outbox.rearm('index', 'index', {}, 1_300)
      return outbox.get('index')?.status
    })
    expect(status).toBe('pending')
  })

  it('leaves the newest event read from storage once the log forgets', async () => {
    const id = runId(5)
    const newest = await runInDurableObject(stubOf(id), (_instance, state) => {
      const log = new EventLog(state.storage.sql, () => id)
      const started = (step: number) => ({ type: 'step_started' as const, data: { step } })
      expect(log.newest()).toBeUndefined()
      log.append([started(0)], 1_000)
      expect(log.newest()).toEqual({ seq: 1, at: 1_000 })
      rolledBack(state.storage, () => log.append([started(1)], 2_000))
      log.forget()
      return log.newest()
    })
    expect(newest).toEqual({ seq: 1, at: 1_000 })
  })

  it('leaves the outbox of a new run read from storage once it forgets', async () => {
    const id = runId(6)
    const entry = await runInDurableObject(stubOf(id), (_instance, state) => {
      const storage = new RunStorage(state.storage.sql)
      expect(storage.ensureSchema()).toBe(true)
      const outbox = new Outbox(state.storage.sql, () => 0)
      outbox.startsEmpty()
      outbox.enqueue('index', 'index', {}, 1_000)
      // A failed attempt leaves it pending with its backoff: a re-arm must keep both.
      outbox.failed(outbox.get('index')!, 1_100, new Error('D1 down'))
      rolledBack(state.storage, () => outbox.enqueue('callback', 'callback', {}, 1_200))
      outbox.forget()
      outbox.rearm('index', 'index', {}, 1_300)
      return outbox.get('index')
    })
    expect(entry).toMatchObject({ status: 'pending', attempts: 1, nextAt: 2_100 })
  })

  it('leaves the values of a new run read from storage once they are forgotten', async () => {
    const id = runId(7)
    const values = await runInDurableObject(stubOf(id), (_instance, state) => {
      const storage = new RunStorage(state.storage.sql)
      storage.ensureSchema()
      // Created here: a key never written is absent without a read.
      const before = storage.getValue('cancel')
      storage.setValue('cancel', { reason: 'first' })
      rolledBack(state.storage, () => storage.setValue('blocked', { reason: 'undone' }))
      storage.forget()
      // Read from the table now: the rolled-back row is not there, the written one is.
      return {
        before,
        blocked: storage.getValue('blocked'),
        cancel: storage.getValue<{ reason: string }>('cancel')?.reason,
      }
    })
    expect(values).toEqual({ before: undefined, blocked: undefined, cancel: 'first' })
  })

  it('leaves the run table read from storage once the values are forgotten', async () => {
    const id = runId(4)
    const values = await runInDurableObject(stubOf(id), (_instance, state) => {
      const storage = new RunStorage(state.storage.sql)
      storage.setValue('cancel', { reason: 'first' })
      rolledBack(state.storage, () => storage.setValue('cancel', { reason: 'undone' }))
      storage.forget()
      const afterForget = storage.getValue<{ reason: string }>('cancel')?.reason
      // What a later write sets is what a read gets, without reading the table again.
      storage.setValue('cancel', { reason: 'second' })
      return { afterForget, later: storage.getValue<{ reason: string }>('cancel')?.reason }
    })
    expect(values).toEqual({ afterForget: 'first', later: 'second' })
  })
})
