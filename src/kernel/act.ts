import { DEFAULT_MAX_PARALLEL_CALLS } from './budget'
import { verdictFor } from './confirm'
import { dispatch } from './dispatch'
import { reviewAgain } from './review'
import { answeredCall, firstWithoutStatus, someHasStatus } from './calls'
import { replaceCall, updateState } from './update-state'
import { type Call, type RunState } from './state'
import { type SyncOrAsync } from './sync-or-async'
import type { Tool } from './tool'
import { completeStep, transitionTo, type Slice, type Transition } from './transition'
import {
  dispatchContext,
  finishCall,
  guarded,
  recorded,
  runCall,
  toolOutputLog,
  withAnswered,
} from './act-record'
import { actDelegated, cancelledChild, startParallelDelegates } from './delegate-calls'
import { needsEditScreening, screenEdited } from './guardrails/edited-input'

/**
 * The act phase (docs/architecture.md): one call's next move per transition, in the model's
 * order. A side effect first gets its `started` record (persisted before it runs), then runs in
 * the next transition of the same slice; a `started` record this slice did not write means the
 * process that wrote it died, and the call is not run again (unless its tool is idempotent).
 */
export function act(state: RunState, slice: Slice, started: number): SyncOrAsync<Transition> {
  const stepIndex = state.steps.length - 1
  const current = state.steps[stepIndex]!
  if (someHasStatus(current.calls, 'pending')) return reviewAgain(state, slice)
  // Read-only calls that are ready run first, together (each with its own timeout and signal):
  // they are safe to repeat, so a crash among them only means running them again.
  const reads = readyReadOnly(current.calls, slice, state.budget.maxParallelCalls)
  if (reads.length > 1) return runReadOnly(state, stepIndex, reads, slice)
  if (reads.length === 1) return runCall(state, stepIndex, reads[0]!, slice, started)
  return actInOrder(state, stepIndex, slice, started)
}

/**
 * The rest of act, when no read-only call is ready: delegates, the step's end, approvals, side
 * effects. A function of its own so that `act`, which every step runs, stays small: V8 optimizes
 * a function once the bytecode it has run adds up to a multiple of its size, and a step's
 * read-only call ran only the first lines of one three times as long; with the same split of
 * recordReply, 3% fewer instructions in a fresh process's first 2k steps
 * (docs/development.md#kernel-performance).
 */
function actInOrder(
  state: RunState,
  stepIndex: number,
  slice: Slice,
  started: number,
): SyncOrAsync<Transition> {
  const current = state.steps[stepIndex]!
  // Read-only delegates start their children together; then the calls go on in order.
  const spawned = startParallelDelegates(state, stepIndex, slice)
  if (spawned) return spawned
  const call = firstWithoutStatus(current.calls, 'done')
  if (!call) {
    const next = completeStep(state, slice)
    const stopReason = next.result?.stopReason ?? null
    return transitionTo(next, 'complete_step', { step: stepIndex, stopReason })
  }
  if (call.status === 'awaiting_approval') {
    return transitionTo(updateState(state, { phase: 'await_approval' }), 'await')
  }
  if (call.status === 'denied') return finishCall(state, stepIndex, deniedCall(call), slice, 0)
  const tool = slice.registry.get(call.name)
  if (tool?.delegate) return actDelegated(state, stepIndex, call, tool.delegate, slice)
  if (call.status === 'started') {
    if (slice.startedCalls.has(call.id)) return runCall(state, stepIndex, call, slice, started)
    // Read back from storage: the process that started it died before recording a result.
    if (!tool?.idempotent) return finishCall(state, stepIndex, unknownOutcome(call), slice, 0)
    // Idempotent: running again with the same idempotency key is harmless.
    const again = { ...call, attempts: call.attempts + 1 }
    return runCall(state, stepIndex, again, slice, started)
  }
  // Arguments a person edited meet the tool-input guardrails before the call runs.
  if (needsEditScreening(call, slice)) {
    return screenEdited(state, stepIndex, call, !!tool?.sideEffect, slice)
  }
  if (tool?.sideEffect && needsStartRecord(call, state, tool)) {
    // Persisted before the side effect runs: a crash after this never runs it twice.
    const started: Call = { ...call, status: 'started', attempts: call.attempts + 1 }
    slice.startedCalls.add(call.id)
    const fields = { step: stepIndex, tool: call.name, callId: call.id }
    return transitionTo(replaceCall(state, stepIndex, started), 'start_call', fields, 'side_effect')
  }
  return runCall(state, stepIndex, call, slice, started)
}

function needsStartRecord(call: Call, state: RunState, tool: Tool): boolean {
  if (call.argsError) return false // dispatch refuses it without running anything
  if (call.status === 'approved') return true
  return verdictFor(state.policy, tool) === 'run'
}

/**
 * The step's ready calls that have no side effect (unknown tools too: dispatch refuses them);
 * delegated calls have their own course (delegate-calls.ts).
 */
function readyReadOnly(calls: Call[], slice: Slice, cap = DEFAULT_MAX_PARALLEL_CALLS): Call[] {
  const reads: Call[] = []
  for (let k = 0; k < calls.length; k++) {
    const c = calls[k]!
    if (reads.length === cap) break
    const tool = slice.registry.get(c.name)
    if (c.status === 'ready' && !tool?.sideEffect && !tool?.delegate) reads.push(c)
  }
  return reads
}

/** Runs `reads` at the same time and records every observation in one transition. */
async function runReadOnly(
  state: RunState,
  stepIndex: number,
  reads: Call[],
  slice: Slice,
): Promise<Transition> {
  const log = toolOutputLog(slice)
  const results = await Promise.all(
    reads.map((c) => dispatch(c, dispatchContext(state, c, slice, log))),
  )
  const done: Call[] = []
  let bytes = 0
  let ms = 0
  reads.forEach((c, k) => {
    const result = results[k]!
    done.push(recorded(c, result))
    bytes += result.originalSize + result.observation.length
    ms = Math.max(ms, result.ms)
  })
  // The model's order stays: each call keeps its place in the step.
  const next = withAnswered(state, stepIndex, done, ms, slice)
  const change = transitionTo(next, 'run_calls', {
    step: stepIndex,
    tool: reads.map((c) => c.name).join(','),
    stopReason: next.result?.stopReason ?? null,
    bytes,
  })
  return guarded(change, log, slice)
}

/** The observation of a call whose item was denied, declined, expired or cancelled. */
function deniedCall(call: Call): Call {
  const a = call.approval
  const by = a?.decidedBy ?? 'the approver'
  const words = a?.reason && !CLOSING_REASONS.has(a.reason) ? ` ("${a.reason}")` : ''
  if (a?.kind === 'question') {
    const why =
      a.reason === 'expired'
        ? 'nobody answered before the question expired'
        : a.reason === 'cancelled'
          ? 'the run was cancelled'
          : `${by} declined to answer${words}`
    return answeredCall(
      call,
      'denied',
      `[NoAnswer] The question was not answered: ${why}. Go on without the answer, or finish and say what you needed.`,
    )
  }
  const why =
    a?.reason === 'expired'
      ? `the ${a.kind === 'connect' ? 'connection request' : 'approval request'} expired with no decision`
      : a?.reason === 'cancelled'
        ? 'the run was cancelled'
        : a?.kind === 'connect'
          ? `the account was not connected: ${by} declined${words}`
          : `it was denied by ${by}${a?.reason ? ` ("${a.reason}")` : ''}`
  const observation = `[ToolError] ${call.name} was not run: ${why}. Use read-only tools instead, or ask the user for permission.`
  return answeredCall(call, 'denied', observation)
}

/** Reasons the system or a person's plain decline give, which the observation words itself. */
const CLOSING_REASONS = new Set(['expired', 'cancelled', 'declined'])

/**
 * Closes the calls a cancelled run leaves `started` (the crash test found them left
 * `started`, with no observation, in a finished run). One read back from storage was cut off by
 * a crash and may have happened: outcome unknown, whether or not the tool is idempotent (a
 * cancelled run retries nothing). One this process recorded but has not run was not run.
 */
export function closeStartedCalls(state: RunState, slice: Slice): RunState {
  const stepIndex = state.steps.length - 1
  let next = state
  for (const call of state.steps[stepIndex]?.calls ?? []) {
    if (call.status !== 'started') continue
    const closed = call.child
      ? cancelledChild(call)
      : slice.startedCalls.has(call.id)
        ? notRun(call)
        : unknownOutcome(call)
    next = replaceCall(next, stepIndex, closed)
  }
  return next
}

function notRun(call: Call): Call {
  return answeredCall(
    call,
    'tool_error',
    `[ToolError] ${call.name} was not run: the run was cancelled`,
  )
}

function unknownOutcome(call: Call): Call {
  const observation =
    `[ToolError] outcome unknown: ${call.name} (call ${call.id}) was started but the run stopped ` +
    'before its result was recorded. It was not run again; check its effect before retrying.'
  return answeredCall(call, 'outcome_unknown', observation)
}
