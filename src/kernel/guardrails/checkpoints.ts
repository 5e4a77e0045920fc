import type { RunState, Step } from '../state'
import { isPromise, type SyncOrAsync } from '../sync-or-async'
import { stop, transitionTo, type Slice, type Transition } from '../transition'
import { updateState } from '../update-state'
import { screen, stopTripped, withScreened, type Screened } from './screen'

/**
 * Where the kernel runs the input and output guardrails (docs/guardrails.md#where-they-run); the
 * tool points are in review.ts (arguments, before anyone is asked) and act-record.ts
 * (observations, before the model sees them).
 */

const NOWHERE = { step: null, tool: null, callId: null }

/** The task has not been screened yet: the run's first transition, before any model call. */
export function needsInputScreen(state: RunState, slice: Slice): boolean {
  return (
    slice.guardrails.input.length > 0 &&
    state.steps.length === 0 &&
    !state.guardrails.some((r) => r.point === 'input')
  )
}

/** The input guardrails on the task: a rewrite replaces it, a tripwire ends the run. */
export function screenInput(state: RunState, slice: Slice): SyncOrAsync<Transition> {
  const screened = screen('input', state.task, NOWHERE, state, slice)
  return isPromise(screened)
    ? screened.then((s) => inputScreened(state, s, slice))
    : inputScreened(state, screened, slice)
}

function inputScreened(state: RunState, s: Screened, slice: Slice): Transition {
  const next = withScreened(state, [s])
  if (s.tripped) {
    const done = stopTripped(next, s.tripped, slice)
    return transitionTo(done, 'guardrail', { stopReason: done.result!.stopReason })
  }
  const task = s.value as string
  return transitionTo(task === state.task ? next : updateState(next, { task }), 'guardrail')
}

/** A finish read from the model: the answer, and the validated output of a structured run. */
export interface Finish {
  answer: string
  output: unknown
}

/**
 * The output guardrails on a final answer, before it is delivered: `finished` holds the finish
 * step (last) and `then` ends the run with what they let through. A structured run's output is
 * what they see (a rewrite's value is the new output, its JSON the answer); else the answer text.
 * A tripwire ends the run with no answer, and the step keeps none: nothing delivers it.
 */
export function screenAnswer(
  finished: RunState,
  finish: Finish,
  slice: Slice,
  then: (state: RunState) => Transition,
): SyncOrAsync<Transition> {
  const structured = finished.agent.output !== null
  const value = structured ? finish.output : finish.answer
  const stepIndex = finished.steps.length - 1
  const where = { step: stepIndex, tool: null, callId: null }
  const done = (s: Screened): Transition => {
    const next = withScreened(finished, [s])
    if (s.tripped) {
      next.steps = withAnswer(finished.steps, null)
      return then(stopTripped(next, s.tripped, slice))
    }
    if (s.value === value)
      return then(stop(next, 'finish', slice, null, finish.answer, finish.output))
    const answer = structured ? JSON.stringify(s.value, null, 2) : (s.value as string)
    const output = structured ? s.value : null
    next.steps = withAnswer(finished.steps, answer)
    return then(stop(next, 'finish', slice, null, answer, output))
  }
  const screened = screen('output', value, where, finished, slice)
  return isPromise(screened) ? screened.then(done) : done(screened)
}

/** The steps with the last one's answer replaced (and the raw reply, which held the old one, dropped). */
function withAnswer(steps: Step[], answer: string | null): Step[] {
  const last = steps[steps.length - 1]!
  return steps.slice(0, -1).concat([{ ...last, answer, text: null }])
}
