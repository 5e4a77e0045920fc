/**
 * Runs saved by version 1 of the state schema load, migrate and resume. The fixtures are the
 * RunStore's SQLite rows exactly as the version-1 code wrote them (test/fixtures/run-state-v1):
 * the state row without its steps, and one row per step. They are put together the way
 * RunStorage.loadState does, then go through `parseRunState`.
 */
import { describe, expect, it } from 'vitest'
import awaitingRows from '../fixtures/run-state-v1/awaiting-approval.json'
import finishedRows from '../fixtures/run-state-v1/finished.json'
import startedRows from '../fixtures/run-state-v1/started-side-effect.json'
import {
  parseRunState,
  pendingApprovals,
  RUN_STATE_VERSION,
  toRunResult,
  type RunState,
} from '../../src/kernel/index'
import { nativeAnswer } from '../fakes/scripted-model'
import { approveSaved, resumeSaved as resume, savedParts, type Rows } from './saved-states'

/** The state as RunStorage.loadState reads it from the rows, migrated and validated. */
function load(rows: Rows): RunState {
  const { meta, steps } = savedParts(rows)
  expect(meta.v).toBe(1)
  const parsed = parseRunState({ ...meta, steps })
  if (!parsed.ok) throw new Error(parsed.error)
  return parsed.state
}

describe('run states saved by version 1', () => {
  it.each([
    ['awaiting approval', awaitingRows],
    ['with a started side effect', startedRows],
    ['finished', finishedRows],
  ])('%s: migrate to the current version with every key present', (_name, rows) => {
    const state = load(rows)
    expect(state.v).toBe(RUN_STATE_VERSION)
    expect(state).toMatchObject({ modelCall: null, cancelReason: null })
    expect(state.usage).toMatchObject({ lostModelCalls: 0, lostPromptTokens: 0 })
    for (const step of state.steps) {
      expect(step).toMatchObject({ lostModelCalls: 0 })
      expect(step).toHaveProperty('answer')
      expect(step).toHaveProperty('formatError')
      for (const call of step.calls) {
        for (const key of ['rawArgs', 'argsError', 'approval', 'observation', 'handle', 'ms']) {
          expect(call).toHaveProperty(key)
        }
      }
    }
    // What the run recorded survives the migration unchanged.
    expect(state.steps[0]!.calls[0]).toMatchObject({
      id: 'call_calc',
      name: 'calculator',
      status: 'done',
      observation: '6 * 7 = 42',
      kind: 'ok',
    })
  })

  it('awaiting approval: the pending call can be approved, runs once, and the run finishes', async () => {
    const state = load(awaitingRows)
    expect(state.phase).toBe('await_approval')
    const [pending] = pendingApprovals(state)
    expect(pending!.call).toMatchObject({
      id: 'call_post',
      status: 'awaiting_approval',
      approval: { decision: null, decidedBy: null },
    })
    const r = await approveSaved(state, nativeAnswer('Recorded 42.'))
    expect(toRunResult(r.state)).toMatchObject({
      ok: true,
      answer: 'Recorded 42.',
      stopReason: 'finish',
    })
    expect(r.ran).toEqual([
      {
        name: 'http_post',
        args: { url: 'https://receiver.test/record', body: { value: 42 } },
        callId: 'call_post',
      },
    ])
    expect(r.state.steps[1]!.calls[0]).toMatchObject({
      observation: 'HTTP 200',
      approval: { decision: 'approved', decidedBy: 'api:alice' },
    })
    expect(r.model.requests).toHaveLength(1)
  })

  it('a started side effect resumes as outcome unknown, is not run again, and the run finishes', async () => {
    const state = load(startedRows)
    expect(state.phase).toBe('act')
    expect(state.steps[1]!.calls[0]).toMatchObject({ status: 'started', attempts: 1 })
    const r = resume(state, [nativeAnswer('Could not confirm the record.')])
    const out = await r.run()
    expect(r.ran).toEqual([])
    expect(out.state.steps[1]!.calls[0]).toMatchObject({
      kind: 'outcome_unknown',
      observation:
        '[ToolError] outcome unknown: http_post (call call_post) was started but the run stopped before its result was recorded. It was not run again; check its effect before retrying.',
    })
    expect(toRunResult(out.state)).toMatchObject({ ok: true, stopReason: 'finish' })
    // The model saw the unknown outcome as the call's result.
    const last = r.model.requests.at(-1)!.messages.at(-1)!
    expect(last).toMatchObject({ role: 'tool', tool_call_id: 'call_post' })
  })

  it('finished: the trace reads as before and nothing runs again', async () => {
    const state = load(finishedRows)
    expect(toRunResult(state)).toMatchObject({
      ok: true,
      answer: '42',
      stopReason: 'finish',
      usage: { modelCalls: 2 },
    })
    const r = resume(state, [])
    const out = await r.run()
    expect(out).toMatchObject({ end: 'done', transitions: 0 })
    expect(out.state).toBe(state)
    expect(r.ran).toEqual([])
  })
})
