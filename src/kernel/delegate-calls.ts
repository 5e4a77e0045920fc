import { dispatchContext, finishCall, guarded, recorded, toolOutputLog } from './act-record'
import { answeredCall } from './calls'
import { childObservation, waitingOnChild, withChildUsage, type ChildOutcome } from './delegation'
import { dispatch } from './dispatch'
import { ToolRegistry } from './registry'
import { type Call, type RunState } from './state'
import { isPromise, type SyncOrAsync } from './sync-or-async'
import type { DelegateSpec } from './tool'
import { transitionTo, type Slice, type Transition } from './transition'
import { replaceCall, updateState } from './update-state'

/**
 * A delegated call's course through the act phase (docs/agents.md#delegation): its `started`
 * record, persisted before the child exists; the child created (idempotently: its id comes from
 * the run's and the call's, so a retry after a crash finds the same child); the run waits in
 * `await_child`, holding no CPU, until the child's end is known; then the child's answer is
 * recorded through dispatch (redaction, truncation) and its usage added to the run's.
 */
export function actDelegated(
  state: RunState,
  stepIndex: number,
  call: Call,
  spec: DelegateSpec,
  slice: Slice,
): SyncOrAsync<Transition> {
  if (call.status === 'ready' || call.status === 'approved') {
    const started: Call = { ...call, status: 'started', attempts: call.attempts + 1 }
    slice.startedCalls.add(call.id)
    const fields = { step: stepIndex, tool: call.name, callId: call.id }
    return transitionTo(replaceCall(state, stepIndex, started), 'start_call', fields)
  }
  // A started call with no child: created now, or found when an earlier attempt made it.
  if (!call.child) return startChildren(state, stepIndex, [call], slice)
  const outcome = slice.deps.children?.outcome(call)
  if (!outcome) {
    return transitionTo(updateState(state, { phase: 'await_child' }), 'await')
  }
  return recordChild(state, stepIndex, call, spec, outcome, slice)
}

/**
 * What the step's delegated calls need before its calls go on in order: a child that ended is
 * recorded (whatever its place: it has run), every ready read-only delegate is started at once
 * (one `started` transition) and their children created together; undefined when none of this
 * is due.
 */
export function startParallelDelegates(
  state: RunState,
  stepIndex: number,
  slice: Slice,
): SyncOrAsync<Transition> | undefined {
  const calls = state.steps[stepIndex]!.calls
  const children = slice.deps.children
  for (const c of calls) {
    const outcome = waitingOnChild(c) ? children?.outcome(c) : undefined
    const spec = slice.registry.get(c.name)?.delegate
    if (outcome && spec) return recordChild(state, stepIndex, c, spec, outcome, slice)
  }
  const readOnly = (c: Call) => slice.registry.get(c.name)?.delegate?.sideEffects === false
  const ready = calls.filter((c) => c.status === 'ready' && readOnly(c))
  if (ready.length) {
    let next = state
    for (const c of ready) {
      slice.startedCalls.add(c.id)
      next = replaceCall(next, stepIndex, { ...c, status: 'started', attempts: c.attempts + 1 })
    }
    const tool = ready.map((c) => c.name).join(',')
    return transitionTo(next, 'start_call', { step: stepIndex, tool })
  }
  const unborn = calls.filter((c) => c.status === 'started' && !c.child && readOnly(c))
  return unborn.length ? startChildren(state, stepIndex, unborn, slice) : undefined
}

/** Creates the children of `calls` (found when they exist); a refusal is the call's error. */
async function startChildren(
  state: RunState,
  stepIndex: number,
  calls: Call[],
  slice: Slice,
): Promise<Transition> {
  const children = slice.deps.children
  const started = await Promise.all(
    calls.map((call) => {
      const spec = slice.registry.get(call.name)?.delegate
      if (!children || !spec) {
        return { ok: false as const, error: 'delegation needs a run store (Deps.children)' }
      }
      return children.start(call, spec, state).catch((err: unknown) => ({
        ok: false as const,
        error: `the child run could not be started: ${(err as Error)?.message ?? String(err)}`,
      }))
    }),
  )
  let next = state
  calls.forEach((call, k) => {
    const out = started[k]!
    const now = next.steps[stepIndex]!.calls.find((c) => c.id === call.id)!
    const answered = out.ok
      ? { ...now, child: out.child }
      : answeredCall(now, 'tool_error', `[ToolError] ${call.name}: ${slice.redact(out.error)}`)
    next = replaceCall(next, stepIndex, answered)
  })
  // A step whose last call was refused here is complete: act completes it next.
  return transitionTo(next, 'start_child', {
    step: stepIndex,
    tool: calls.map((c) => c.name).join(','),
    callId: calls.length === 1 ? calls[0]!.id : null,
  })
}

/** The child's end as the call's observation, through dispatch; its usage added to the run's. */
function recordChild(
  state: RunState,
  stepIndex: number,
  call: Call,
  spec: DelegateSpec,
  outcome: ChildOutcome,
  slice: Slice,
): SyncOrAsync<Transition> {
  const seen = childObservation(outcome)
  const tool = slice.registry.get(call.name)!
  const answering = {
    ...tool,
    delegate: spec,
    // Text that starts with [ToolError] is a failed call (dispatch.ts).
    handler: () => (seen.ok ? seen.text : `[ToolError] ${call.name}: ${seen.error}`),
  }
  // A child's answer is an observation like any other: the tool-output guardrails see it.
  const log = toolOutputLog(slice)
  const ctx = {
    ...dispatchContext(state, call, slice, log),
    registry: new ToolRegistry([answering]),
  }
  const result = dispatch(call, ctx)
  const done = (r: Awaited<typeof result>): Transition => {
    const bytes = r.originalSize + r.observation.length
    const change = finishCall(state, stepIndex, recorded(call, r), slice, bytes)
    // A state finishCall just made: nobody else holds it.
    change.state.usage = withChildUsage(change.state, outcome)
    change.state.activeMs += outcome.activeMs
    return guarded(change, log, slice)
  }
  return isPromise(result) ? result.then(done) : done(result)
}

/**
 * The `await_child` phase: back to act once any waiting child has ended (or nothing is left to
 * wait for); otherwise the same state, and the slice ends until the child's end is reported.
 */
export function awaitChildren(state: RunState, slice: Slice): Transition {
  const calls = state.steps.at(-1)?.calls ?? []
  const children = slice.deps.children
  const waiting = calls.filter(waitingOnChild)
  const ended = !children || waiting.length === 0 || waiting.some((c) => children.outcome(c))
  if (!ended) return transitionTo(state, 'await', {}, 'wait')
  return transitionTo(updateState(state, { phase: 'act' }), 'child_done')
}

/** A delegated call of a cancelled run: its child is cancelled with it. */
export function cancelledChild(call: Call): Call {
  return answeredCall(
    call,
    'tool_error',
    `[ToolError] ${call.name} was not finished: the run was cancelled, and its child run ${call.child!.runId} with it`,
  )
}
