/**
 * Runs saved by version 3 of the state schema (before agents) load, migrate to the current
 * version and resume. The fixtures (test/fixtures/run-state-v3) are RunStore rows as the
 * version-3 code wrote them, made by running that code's kernel (commit 058fdc3): the state row
 * without its steps (and without its conversation, which has a row of its own), and one row per
 * step.
 */
import { describe, expect, it } from 'vitest'
import awaitingRows from '../fixtures/run-state-v3/awaiting-approval.json'
import finishedRows from '../fixtures/run-state-v3/finished.json'
import followUpRows from '../fixtures/run-state-v3/follow-up-awaiting-approval.json'
import startedRows from '../fixtures/run-state-v3/started-side-effect.json'
import awaitingRequest from '../fixtures/run-state-v3/awaiting-approval.request.json'
import {
  createRunState,
  RUN_STATE_VERSION,
  runSlice,
  toRunResult,
  type RunState,
} from '../../src/kernel/index'
import { nativeAnswer } from '../fakes/scripted-model'
import { UNLIMITED } from './harness'
import {
  approveSaved,
  loadSaved,
  resumeSaved as resume,
  savedParts,
  type Rows,
} from './saved-states'

/** The state as RunStorage.loadState reads it from the rows (no agent row yet), migrated. */
function load(rows: Rows): RunState {
  const { meta } = savedParts(rows)
  expect(meta.v).toBe(3)
  expect(rows.run.map((r) => r.k)).not.toContain('agent')
  return loadSaved(rows)
}

describe('run states saved by version 3', () => {
  it.each([
    ['awaiting approval', awaitingRows],
    ['with a started side effect', startedRows],
    ['finished', finishedRows],
    ['a follow-up awaiting approval', followUpRows],
  ])('%s: migrate to the current version as the default agent', (_name, rows) => {
    const state = load(rows)
    expect(state.v).toBe(RUN_STATE_VERSION)
    expect(state.agent).toMatchObject({
      name: 'default',
      instructions: null,
      output: null,
      model: null,
      temperature: null,
    })
    expect(state.agent.version).toMatch(/^[0-9a-f]{12}$/)
    // The version is the one a run of the same shape started now gets.
    const now = createRunState({
      task: state.task,
      tools: state.tools,
      protocol: state.protocolSetting,
      policy: state.policy as { mode: 'ask' },
    })
    expect(state.agent.version).toBe(now.agent.version)
    expect(toRunResult(state).agent).toEqual({ name: 'default', version: state.agent.version })
    if (state.result) expect(state.result.output).toBeNull()
  })

  it('awaiting approval: approved, the side effect runs once, the prompt is as before', async () => {
    const r = await approveSaved(load(awaitingRows), nativeAnswer('Recorded 42.'))
    expect(toRunResult(r.state)).toMatchObject({ ok: true, answer: 'Recorded 42.' })
    expect(toRunResult(r.state)).not.toHaveProperty('output')
    expect(r.ran.map((c) => c.callId)).toEqual(['call_post'])
    // Byte for byte what version 3's kernel sent on this resume (test/kernel/prompt-format.test.ts
    // checks the text protocol too).
    expect(JSON.stringify(r.model.requests[0]!.messages)).toBe(JSON.stringify(awaitingRequest))
  })

  it('a started side effect resumes as outcome unknown and is not run again', async () => {
    const state = load(startedRows)
    expect(state.steps[1]!.calls[0]).toMatchObject({ status: 'started', attempts: 1 })
    const r = resume(state, [nativeAnswer('Could not confirm the record.')])
    const out = await runSlice(state, r.deps, UNLIMITED)
    expect(r.ran).toEqual([])
    expect(out.state.steps[1]!.calls[0]).toMatchObject({ kind: 'outcome_unknown' })
    expect(toRunResult(out.state)).toMatchObject({ ok: true, stopReason: 'finish' })
  })

  it('finished: nothing runs again', async () => {
    const state = load(finishedRows)
    const r = resume(state, [])
    const out = await runSlice(state, r.deps, UNLIMITED)
    expect(out).toMatchObject({ end: 'done', transitions: 0 })
    expect(toRunResult(state)).toMatchObject({ ok: true, answer: '42', stopReason: 'finish' })
  })

  it('a follow-up resumes with its frozen history between the system prompt and the task', async () => {
    const state = load(followUpRows)
    expect(state.conversation).toMatchObject({ position: 1, droppedTurns: 0 })
    const r = await approveSaved(state, nativeAnswer('Recorded.'))
    expect(toRunResult(r.state)).toMatchObject({ ok: true, answer: 'Recorded.' })
    const messages = r.model.requests[0]!.messages
    expect(messages[1]).toEqual({ role: 'user', content: state.conversation!.prompt })
    expect(messages[2]).toEqual({ role: 'user', content: 'Task: Now record it' })
  })
})
