/**
 * What the tests of saved run states (test/fixtures/run-state-v*) share: the RunStore rows as
 * RunStorage.loadState puts them together, the tools those runs were saved with, and a resume.
 */
import { expect } from 'vitest'
import * as z from 'zod/mini'
import {
  decideApproval,
  pendingApprovals,
  runSlice,
  toRunResult,
  type RunState,
} from '../../src/kernel/index'
import { nativeAnswer, ScriptedModel } from '../fakes/scripted-model'
import { recordingTool, sliceDeps, UNLIMITED, type Ran } from './harness'

/** A run's SQLite rows: the state row without its steps, and one row per step. */
export type Rows = { run: { k: string; v: string }[]; step: { i: number; json: string }[] }

/** The saved state row and its steps in order, not yet migrated. */
export function savedParts(rows: Rows): { meta: Record<string, unknown>; steps: unknown[] } {
  const meta = JSON.parse(rows.run.find((r) => r.k === 'state')!.v) as Record<string, unknown>
  const steps = rows.step.toSorted((a, b) => a.i - b.i).map((r) => JSON.parse(r.json) as unknown)
  return { meta, steps }
}

/** The tools of the saved runs; http_post is not idempotent here, so a lost start is unknown. */
function savedRunTools(ran: Ran) {
  return [
    recordingTool(ran, {
      name: 'calculator',
      description: 'Evaluate an arithmetic expression.',
      params: z.object({ expression: z.string() }),
      returns: 'The result.',
      answer: ({ expression }) => `${expression} = 42`,
    }),
    recordingTool(ran, {
      name: 'http_post',
      description: 'POST a JSON body to a URL.',
      params: z.object({ url: z.string(), body: z.record(z.string(), z.unknown()) }),
      returns: 'The response status.',
      sideEffect: true,
      answer: () => 'HTTP 200',
    }),
  ]
}

/** Resumes a saved run a minute after it was created; the model answers the turns after it. */
export function resumeSaved(state: RunState, replies: ReturnType<typeof nativeAnswer>[]) {
  const ran: Ran = []
  // The model answers by turn (assistant messages so far): the saved runs are past turn 0 and 1.
  const model = new ScriptedModel((_request, turn) => replies[turn - state.steps.length])
  const now = state.createdAt + 60_000
  const deps = sliceDeps(model, savedRunTools(ran), () => now)
  return { ran, model, deps, now, run: () => runSlice(state, deps, UNLIMITED) }
}

/** Approves the saved run's pending `call_post` (as `api:alice`) and runs the slice after it. */
export async function approveAndResume(
  state: RunState,
  replies: ReturnType<typeof nativeAnswer>[],
) {
  const [pending] = pendingApprovals(state)
  const r = resumeSaved(state, replies)
  const decided = decideApproval(state, {
    callId: 'call_post',
    decision: 'approve',
    argsHash: pending!.call.approval!.hash,
    by: 'api:alice',
    now: r.now,
  })
  if (!decided.ok) throw new Error(decided.message)
  const out = await runSlice(decided.state, r.deps, UNLIMITED)
  return { ...r, out }
}

/**
 * Resumes a saved run whose side effect was started: its outcome is unknown, it is not run
 * again, and the run finishes.
 */
export async function resumeStartedSideEffect(state: RunState) {
  expect(state.steps[1]!.calls[0]).toMatchObject({ status: 'started', attempts: 1 })
  const r = resumeSaved(state, [nativeAnswer('Could not confirm the record.')])
  const out = await r.run()
  expect(r.ran).toEqual([])
  expect(out.state.steps[1]!.calls[0]).toMatchObject({ kind: 'outcome_unknown' })
  expect(toRunResult(out.state)).toMatchObject({ ok: true, stopReason: 'finish' })
  return { ...r, out }
}
