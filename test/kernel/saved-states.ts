/**
 * What the tests of saved run states (test/fixtures/run-state-v*) share: the RunStore rows as
 * RunStorage.loadState puts them together, the tools those runs were saved with, and a resume.
 */
import * as z from 'zod/mini'
import {
  decideApproval,
  parseRunState,
  pendingApprovals,
  runSlice,
  type RunState,
} from '../../src/kernel/index'
import { type nativeAnswer, ScriptedModel } from '../fakes/scripted-model'
import { recordingTool, sliceDeps, UNLIMITED, type Ran } from './harness'

/** A run's SQLite rows: the state row without its steps, and one row per step. */
export type Rows = { run: { k: string; v: string }[]; step: { i: number; json: string }[] }

/** The saved state row and its steps in order, not yet migrated. */
export function savedParts(rows: Rows): { meta: Record<string, unknown>; steps: unknown[] } {
  const meta = JSON.parse(rows.run.find((r) => r.k === 'state')!.v) as Record<string, unknown>
  const steps = rows.step.toSorted((a, b) => a.i - b.i).map((r) => JSON.parse(r.json) as unknown)
  return { meta, steps }
}

/**
 * The state as RunStorage.loadState puts it together from the rows (its conversation and agent
 * have rows of their own; runs saved before agents have no agent row), migrated.
 */
export function loadSaved(rows: Rows): RunState {
  const { meta, steps } = savedParts(rows)
  const row = (k: string) => rows.run.find((r) => r.k === k)
  const conversation = row('conversation') ? (JSON.parse(row('conversation')!.v) as unknown) : null
  const agent = row('agent') ? { agent: JSON.parse(row('agent')!.v) as unknown } : {}
  const parsed = parseRunState({ ...meta, conversation, steps, ...agent })
  if (!parsed.ok) throw new Error(parsed.error)
  return parsed.state
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

/**
 * Approves the saved run's pending call a minute after it was created and runs it to its end;
 * the model answers `reply`. Returns the resume (its requests, the calls run) and the end state.
 */
export async function approveSaved(state: RunState, reply: ReturnType<typeof nativeAnswer>) {
  const [pending] = pendingApprovals(state)
  const r = resumeSaved(state, [reply])
  const decided = decideApproval(state, {
    callId: pending!.call.id,
    decision: 'approve',
    argsHash: pending!.call.approval!.hash,
    by: 'api:alice',
    now: r.now,
  })
  if (!decided.ok) throw new Error(decided.message)
  const out = await runSlice(decided.state, r.deps, UNLIMITED)
  return { ...r, state: out.state }
}
