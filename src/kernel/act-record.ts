import { canonicalJson } from './canonical'
import { dispatch, type Dispatched } from './dispatch'
import { requestItem, resolvedItem } from './pending-items'
import { type Call, type RunState } from './state'
import { observationHandle } from './step-messages'
import { isPromise, type SyncOrAsync } from './sync-or-async'
import type { ObservationStore } from './tool'
import { completeStep, transitionTo, type Slice, type Transition } from './transition'
import { screen, stopTripped, trippedOf, withScreened, type Screened } from './guardrails/screen'
import { replaceCall, updateState } from './update-state'

/**
 * Running one call through dispatch and recording what it gave: shared by the act phase and its
 * delegated calls (delegate-calls.ts).
 */

/**
 * What dispatch needs for `call`; with `log`, the tool-output guardrails screen its observation
 * and push their verdicts there (the caller records them: `guarded`).
 */
export function dispatchContext(
  state: RunState,
  call: Call,
  slice: Slice,
  log?: Screened[],
  startedAt?: number,
) {
  const { deps } = slice
  return {
    registry: slice.registry,
    runId: state.id,
    observations: new RunObservations(deps.observations, state),
    policy: state.policy,
    approved: call.approval?.decision === 'approved',
    person: resolvedItem(call),
    maxObservationTokens: state.budget.maxObservationTokens,
    now: slice.now,
    signal: deps.signal,
    // The run's redactor, or none: dispatch then copies nothing to redact.
    redact: deps.redact,
    screen: log ? observationScreen(state, call, slice, log) : undefined,
    startedAt,
  }
}

/** The tool-output guardrails for `call`'s observation: a tripwire withholds it. */
function observationScreen(state: RunState, call: Call, slice: Slice, log: Screened[]) {
  const where = { step: state.steps.length - 1, tool: call.name, callId: call.id }
  const seen = (s: Screened): string => {
    log.push(s)
    if (!s.tripped) return s.value as string
    const why = s.tripped.reason ?? 'no reason given'
    return `[Guardrail] the output of ${call.name} was withheld by guardrail "${s.tripped.guardrail}": ${why}`
  }
  return (text: string): SyncOrAsync<string> => {
    const screened = screen('toolOutput', text, where, state, slice)
    return isPromise(screened) ? screened.then(seen) : seen(screened)
  }
}

/** A log for the tool-output guardrails, when the run has some. */
export function toolOutputLog(slice: Slice): Screened[] | undefined {
  return slice.guardrails.toolOutput.length ? [] : undefined
}

/**
 * `change` with the tool-output guardrails' verdicts recorded; a tripwire ends the run with the
 * observations recorded (the model never sees them: nothing runs after).
 */
export function guarded(change: Transition, log: Screened[] | undefined, slice: Slice): Transition {
  if (!log?.length) return change
  let next = withScreened(change.state, log)
  const tripped = trippedOf(log)
  if (tripped) {
    next = stopTripped(next, tripped, slice)
    change.event.stopReason = next.result!.stopReason
  }
  change.state = next
  return change
}

/**
 * The store, and behind it the run's own observations: an observation elided from the request
 * (maxContextTokens) but short enough never to be stored is read back from the run's state by
 * the handle its stub names. A class, as CallContext in dispatch.ts: one is made for every call,
 * and the object of two closures it replaced allocated about 200 bytes a call (a heap profile of
 * the kernel bench), five times as much.
 */
class RunObservations implements ObservationStore {
  constructor(
    readonly store: ObservationStore,
    readonly state: RunState,
  ) {}

  put(handle: string, text: string): void | Promise<void> {
    return this.store.put(handle, text)
  }

  async get(handle: string): Promise<string | undefined> {
    const stored = await this.store.get(handle)
    if (stored !== undefined) return stored
    for (const step of this.state.steps) {
      for (const c of step.calls) {
        if (c.observation !== null && observationHandle(c.id) === handle) return c.observation
      }
    }
    return undefined
  }
}

/** Runs `call` now; `started` is the clock read its transition began with (see dispatch). */
export function runCall(
  state: RunState,
  stepIndex: number,
  call: Call,
  slice: Slice,
  started: number,
): SyncOrAsync<Transition> {
  const log = toolOutputLog(slice)
  const result = dispatch(call, dispatchContext(state, call, slice, log, started))
  // Callbacks only for a call that waited: a tool that answered at once makes none.
  if (isPromise(result)) return result.then((r) => recordRun(state, stepIndex, call, slice, r, log))
  return recordRun(state, stepIndex, call, slice, result, log)
}

/** The transition that records what dispatch gave for `call`, guardrail verdicts included. */
function recordRun(
  state: RunState,
  stepIndex: number,
  call: Call,
  slice: Slice,
  result: Dispatched,
  log: Screened[] | undefined,
): SyncOrAsync<Transition> {
  if (result.person) {
    const waiting = waitForPerson(state, stepIndex, call, slice, result)
    return waiting.then((t) => guarded(t, log, slice))
  }
  const bytes = result.originalSize + result.observation.length
  return guarded(finishCall(state, stepIndex, recorded(call, result), slice, bytes), log, slice)
}

/**
 * A handler said it needs a person (`personNeeded`): the call waits on a new item, and runs
 * again once it is resolved (docs/human-in-the-loop.md#pending-items).
 */
async function waitForPerson(
  state: RunState,
  stepIndex: number,
  call: Call,
  slice: Slice,
  result: Dispatched,
): Promise<Transition> {
  const ttl = state.budget.approvalTtlSeconds
  const waiting = await requestItem(call, slice.now(), ttl, result.person!)
  const next = updateState(replaceCall(state, stepIndex, waiting), { phase: 'await_approval' })
  return transitionTo(next, 'await', { step: stepIndex, tool: call.name, callId: call.id })
}

export function recorded(call: Call, result: Dispatched): Call {
  return {
    ...call,
    status: 'done',
    kind: result.kind,
    observation: editNote(call) + result.observation,
    originalSize: result.originalSize,
    tokens: result.tokens,
    truncated: result.truncated,
    handle: result.handle,
    ms: result.ms,
  }
}

/** What the model is told first when a person changed the call's arguments before approving. */
function editNote(call: Call): string {
  const edit = call.approval?.edit
  if (!edit) return ''
  return (
    `[Edited] ${edit.by} changed the arguments before approving; it ran with ${canonicalJson(call.args)} ` +
    `instead of ${canonicalJson(edit.originalArgs)}.\n`
  )
}

/** Records a finished call; the step completes with its last call. */
export function finishCall(
  state: RunState,
  stepIndex: number,
  call: Call,
  slice: Slice,
  bytes: number,
): Transition {
  const next = withAnswered(state, stepIndex, [call], call.ms ?? 0, slice)
  return transitionTo(next, 'run_call', {
    step: stepIndex,
    tool: call.name,
    callId: call.id,
    stopReason: next.result?.stopReason ?? null,
    bytes,
  })
}

/**
 * `state` with the `answered` calls in step `stepIndex` (each in place of the call of its id) and
 * `ms` added to the step's time; the step completes once every call is done.
 */
export function withAnswered(
  state: RunState,
  stepIndex: number,
  answered: readonly Call[],
  ms: number,
  slice: Slice,
): RunState {
  const current = state.steps[stepIndex]!
  const calls: Call[] = []
  let done = true
  for (let k = 0; k < current.calls.length; k++) {
    let next = current.calls[k]!
    for (let j = 0; j < answered.length; j++) if (answered[j]!.id === next.id) next = answered[j]!
    if (next.status !== 'done') done = false
    calls.push(next)
  }
  const steps = state.steps.slice()
  steps[stepIndex] = { ...current, calls, ms: current.ms + ms }
  return done ? completeStep(state, slice, steps) : updateState(state, { steps })
}
