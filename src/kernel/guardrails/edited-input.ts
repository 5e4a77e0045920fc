import { replaceCall, updateState } from '../update-state'
import type { Call, RunState } from '../state'
import { isPromise, type SyncOrAsync } from '../sync-or-async'
import { transitionTo, type Slice, type Transition } from '../transition'
import { screen, stopTripped, withScreened, type Screened } from './screen'
import { took } from './tool-input'

/**
 * The tool-input guardrails on arguments a person edited before approving
 * (docs/guardrails.md#where-they-run): the model's arguments were screened at review, the
 * person's are screened here, after the decision and before the call runs. A tripwire ends the run
 * as at review (the call answered `[Guardrail] … was blocked`, the step's other calls not run); a
 * rewrite replaces the edited arguments. Passing, the call moves on in the same transition (a side
 * effect to its `started` record, anything else to `ready`), so it is screened once.
 */
export function screenEdited(
  state: RunState,
  stepIndex: number,
  call: Call,
  sideEffect: boolean,
  slice: Slice,
): SyncOrAsync<Transition> {
  const where = { step: stepIndex, tool: call.name, callId: call.id }
  const screened = screen('toolInput', call.args, where, state, slice)
  return isPromise(screened)
    ? screened.then((s) => screenedTransition(state, stepIndex, call, sideEffect, s, slice))
    : screenedTransition(state, stepIndex, call, sideEffect, screened, slice)
}

/** True when `call` runs with arguments a person edited and there are guardrails to see them. */
export function needsEditScreening(call: Call, slice: Slice): boolean {
  return call.status === 'approved' && !!call.approval?.edit && !!slice.guardrails.toolInput.length
}

function screenedTransition(
  state: RunState,
  stepIndex: number,
  call: Call,
  sideEffect: boolean,
  s: Screened,
  slice: Slice,
): Transition {
  const calls = state.steps[stepIndex]!.calls.slice()
  const k = calls.findIndex((c) => c.id === call.id)
  const tripped = took(calls, k, s, [])
  const fields = { step: stepIndex, tool: call.name, callId: call.id }
  if (tripped) {
    const steps = state.steps.slice()
    steps[stepIndex] = { ...steps[stepIndex]!, calls }
    const next = stopTripped(withScreened(updateState(state, { steps }), [s]), s.tripped!, slice)
    return transitionTo(next, 'review', { ...fields, stopReason: next.result?.stopReason ?? null })
  }
  const passed = calls[k]!
  if (!sideEffect) {
    const ready = withScreened(replaceCall(state, stepIndex, { ...passed, status: 'ready' }), [s])
    return transitionTo(ready, 'review', fields)
  }
  // Persisted before the side effect runs, as act writes it: a crash after this never runs it twice.
  const started: Call = { ...passed, status: 'started', attempts: passed.attempts + 1 }
  slice.startedCalls.add(call.id)
  const next = withScreened(replaceCall(state, stepIndex, started), [s])
  return transitionTo(next, 'start_call', fields, 'side_effect')
}
