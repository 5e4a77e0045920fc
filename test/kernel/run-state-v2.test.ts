/**
 * Runs saved by version 2 of the state schema (before conversations) load, migrate to the
 * current version and resume. The fixtures (test/fixtures/run-state-v2) are RunStore rows as the
 * version-2 code wrote them: the state row without its steps, and one row per step, made by
 * running that code's kernel (the same three moments as the version-1 fixtures).
 */
import { describe, expect, it } from 'vitest'
import awaitingRows from '../fixtures/run-state-v2/awaiting-approval.json'
import finishedRows from '../fixtures/run-state-v2/finished.json'
import startedRows from '../fixtures/run-state-v2/started-side-effect.json'
import {
  continueConversation,
  followUpSource,
  parseRunState,
  RUN_STATE_VERSION,
  runSlice,
  toRunResult,
  type RunState,
} from '../../src/kernel/index'
import { nativeAnswer } from '../fakes/scripted-model'
import { UNLIMITED } from './harness'
import { approveSaved, resumeSaved as resume, savedParts, type Rows } from './saved-states'

/** The state as RunStorage.loadState reads it from the rows (no conversation row), migrated. */
function load(rows: Rows): RunState {
  const { meta, steps } = savedParts(rows)
  expect(meta.v).toBe(2)
  expect(meta).not.toHaveProperty('conversation')
  const parsed = parseRunState({ ...meta, conversation: null, steps })
  if (!parsed.ok) throw new Error(parsed.error)
  // Without the key at all (a state handed over whole, not read from the rows) it loads too.
  const whole = parseRunState({ ...meta, steps })
  expect(whole.ok).toBe(true)
  return parsed.state
}

describe('run states saved by version 2', () => {
  it.each([
    ['awaiting approval', awaitingRows],
    ['with a started side effect', startedRows],
    ['finished', finishedRows],
  ])('%s: migrate to the current version, continuing no conversation', (_name, rows) => {
    const state = load(rows)
    expect(state.v).toBe(RUN_STATE_VERSION)
    expect(state.conversation).toBeNull()
    expect(toRunResult(state).conversation).toEqual({
      id: state.id,
      position: 0,
      previousRunId: null,
      historyTurns: 0,
      droppedTurns: 0,
    })
    expect(state.steps[0]!.calls[0]).toMatchObject({
      id: 'call_calc',
      status: 'done',
      observation: '6 * 7 = 42',
    })
  })

  it('awaiting approval: approved, the side effect runs once and the run finishes', async () => {
    const state = load(awaitingRows)
    const r = await approveSaved(state, nativeAnswer('Recorded 42.'))
    expect(toRunResult(r.state)).toMatchObject({ ok: true, answer: 'Recorded 42.' })
    expect(r.ran.map((c) => c.callId)).toEqual(['call_post'])
    // The request the resumed run sent has no history message: system, then the task.
    const messages = r.model.requests[0]!.messages
    expect(messages[1]).toEqual({ role: 'user', content: 'Task: Compute 6 * 7 and record it' })
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

  it('finished: nothing runs again, and a follow-up can continue it', async () => {
    const state = load(finishedRows)
    const r = resume(state, [])
    const out = await runSlice(state, r.deps, UNLIMITED)
    expect(out).toMatchObject({ end: 'done', transitions: 0 })
    const conversation = continueConversation(followUpSource(state), 4000)
    expect(conversation).toMatchObject({
      id: state.id,
      position: 1,
      earlierRuns: [state.id],
      droppedTurns: 0,
    })
    expect(conversation.prompt).toContain('Task: Compute 6 * 7\n')
    expect(conversation.prompt).toContain(
      `- calculator {"expression":"6 * 7"} → read_observation handle "${state.id}/obs_call_calc"`,
    )
    expect(conversation.prompt).toContain('Answer: 42')
  })
})
