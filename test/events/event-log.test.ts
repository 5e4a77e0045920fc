/**
 * The event log writes a transition's events in as few statements as the bound-parameter limit
 * allows: however many events one change makes, each is stored once, numbered in order.
 */
import { runInDurableObject } from 'cloudflare:test'
import { describe, expect, it } from 'vitest'
import { EventLog } from '../../src/runs/events/event-log'
import type { NewRunEvent } from '../../src/runs/events/events'
import { stubOf } from '../service/harness'

const started = (step: number): NewRunEvent => ({ type: 'step_started', data: { step } })

describe('the event log', () => {
  it.each([1, 25, 26, 60])(
    'stores %i events of one change in order, numbered after the last',
    async (n) => {
      const id = `run_${String(n).padStart(32, '0')}`
      const stored = await runInDurableObject(stubOf(id), (_instance, state) => {
        const log = new EventLog(state.storage.sql, () => id)
        expect(log.append([started(0)], 1_000)).toBe(1)
        const events = Array.from({ length: n }, (_, i) => started(i + 1))
        expect(log.append(events, 2_000)).toBe(n + 1)
        return log.after(0, 1_000)
      })
      expect(stored.map((e) => e.seq)).toEqual(Array.from({ length: n + 1 }, (_, i) => i + 1))
      expect(stored.map((e) => (e.data as { step: number }).step)).toEqual(
        Array.from({ length: n + 1 }, (_, i) => i),
      )
      expect(stored.map((e) => e.at)).toEqual([
        new Date(1_000).toISOString(),
        ...Array(n).fill(new Date(2_000).toISOString()),
      ])
      expect(new Set(stored.map((e) => e.runId))).toEqual(new Set([id]))
    },
  )
})
