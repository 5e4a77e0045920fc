import { decideByHook, requestApproval } from './approvals'
import { sameJson } from './canonical'
import { verdictFor } from './confirm'
import { answeredCall } from './calls'
import { updateState } from './update-state'
import { type Call, type RunState } from './state'
import { completeStep, transitionTo, type Slice, type Transition } from './transition'
import { isPromise, type SyncOrAsync } from './sync-or-async'
import { screenCalls } from './guardrails/tool-input'
import { stopTripped, trippedOf, withScreened, type Screened } from './guardrails/screen'
import { checkCall, validateArgs } from './validate'

/**
 * The review (docs/architecture.md): the first look at a new step's calls, all at once. In
 * order: the loop guard, argument validation (strict for side effects: their arguments were
 * parsed strictly when the reply was read), the tool's own `check`, then the confirm policy:
 * who must approve. A call that fails the loop guard or its check is answered here with its
 * observation, and nobody is asked about it; nor about a call whose arguments cannot run.
 *
 * `calls` are those of step `stepIndex`; the loop guard compares them with the calls of the
 * steps before it in `state`.
 */
export function reviewCalls(
  calls: Call[],
  stepIndex: number,
  state: RunState,
  slice: Slice,
  log: Screened[] = [],
): SyncOrAsync<Call[]> {
  const window = state.budget.loopGuardWindow
  // Calls the loop guard compares against: the last `window` steps', then this step's so far.
  const seen: Call[] = []
  if (window > 0) {
    for (let s = Math.max(0, stepIndex - window); s < stepIndex; s++) {
      for (const call of state.steps[s]!.calls) seen.push(call)
    }
  }
  const reviewed = calls.map((c) => (c.status === 'pending' ? review(c, seen, state, slice) : c))
  if (!slice.guardrails.toolInput.length) return askIfNeeded(reviewed, state, slice)
  // The tool-input guardrails see the calls before anyone is asked about them.
  const screened = screenCalls(reviewed, stepIndex, state, slice, log)
  return isPromise(screened)
    ? screened.then((c) => askIfNeeded(c, state, slice))
    : askIfNeeded(screened, state, slice)
}

function askIfNeeded(reviewed: Call[], state: RunState, slice: Slice): SyncOrAsync<Call[]> {
  // Asking (hashing the arguments, or the in-memory hook) is the one asynchronous part.
  const asks = reviewed.some((c) => c.status === 'awaiting_approval' && !c.approval)
  return asks ? ask(reviewed, state, slice) : reviewed
}

/** Asks about each reviewed call that awaits a decision and has not been asked yet. */
async function ask(reviewed: Call[], state: RunState, slice: Slice): Promise<Call[]> {
  const now = slice.now()
  for (let k = 0; k < reviewed.length; k++) {
    const call = reviewed[k]!
    if (call.status !== 'awaiting_approval' || call.approval) continue
    const hook = slice.deps.confirm
    const tool = slice.registry.get(call.name)!
    reviewed[k] = hook
      ? await decideByHook(call, tool, hook, now)
      : await requestApproval(call, now, state.budget.approvalTtlSeconds)
  }
  return reviewed
}

/** The phase after review: waiting for a person when any call awaits a decision, else act. */
export function phaseAfterReview(calls: Call[]): 'act' | 'await_approval' {
  return calls.some((c) => c.status === 'awaiting_approval') ? 'await_approval' : 'act'
}

/**
 * A step saved with calls not yet reviewed (a state written before review moved into the think
 * transition): reviewed in a transition of its own.
 */
export async function reviewAgain(state: RunState, slice: Slice): Promise<Transition> {
  const stepIndex = state.steps.length - 1
  const current = state.steps[stepIndex]!
  const log: Screened[] = []
  const calls = await reviewCalls(current.calls, stepIndex, state, slice, log)
  const steps = state.steps.slice()
  steps[stepIndex] = { ...current, calls }
  let next = updateState(state, { steps, phase: phaseAfterReview(calls) })
  next = withScreened(next, log)
  const tripped = trippedOf(log)
  if (tripped) next = stopTripped(next, tripped, slice)
  else if (calls.every((c) => c.status === 'done')) next = completeStep(next, slice)
  const stopReason = next.result?.stopReason ?? null
  return transitionTo(next, 'review', { step: stepIndex, stopReason })
}

/** One call's first look; a call a person must approve comes back awaiting, not yet asked. */
function review(call: Call, seen: Call[], state: RunState, slice: Slice): Call {
  const window = state.budget.loopGuardWindow
  if (window > 0 && seen.some((c) => c.name === call.name && sameJson(c.args, call.args))) {
    return answeredCall(
      call,
      'loop_guard',
      `[LoopGuard] ${call.name} was already called with these exact arguments in the last ${window} steps; its result is above. Do not repeat it: use that result, change the arguments, or finish.`,
    )
  }
  seen.push(call)
  const tool = slice.registry.get(call.name)
  const asks = !!tool?.sideEffect && verdictFor(state.policy, tool) === 'ask'
  // Nothing to look at before dispatch (which validates again, as the security boundary).
  if (!tool || (!asks && !tool.check)) return { ...call, status: 'ready' }
  const valid = validateArgs(call, slice.registry)
  // Dispatch reports a call that cannot run (bad arguments) with its schema; nobody is asked.
  if (!valid.ok) return { ...call, status: 'ready' }
  const problem = checkCall(tool, valid.args, { runId: state.id, callId: call.id })
  if (problem) return answeredCall(call, 'tool_error', slice.redact(`[ToolError] ${problem}`))
  if (!asks) return { ...call, status: 'ready' }
  return { ...call, status: 'awaiting_approval' }
}
