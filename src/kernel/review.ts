import { decideByHook } from './approvals'
import { decidePolicy } from './code-policy'
import { requestItem } from './pending-items'
import { sameJson } from './canonical'
import { verdictFor } from './confirm'
import { answeredCall, someHasStatus } from './calls'
import { updateState } from './update-state'
import { type Call, type RunState } from './state'
import { completeStep, transitionTo, type Slice, type Transition } from './transition'
import { isPromise, type SyncOrAsync } from './sync-or-async'
import { screenCalls } from './guardrails/tool-input'
import { stopTripped, trippedOf, withScreened, type Screened } from './guardrails/screen'
import { checkCall, validateArgs } from './validate'
import type { PersonRequest, Tool } from './tool'
import { safeParse } from 'zod/v4/core'
import { describeThrown } from './describe-thrown'

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
  const reviewed: Call[] = []
  for (let k = 0; k < calls.length; k++) {
    const c = calls[k]!
    reviewed.push(c.status === 'pending' ? review(c, calls, k, stepIndex, state, slice) : c)
  }
  if (!slice.guardrails.toolInput.length) return askIfNeeded(reviewed, state, slice)
  // The tool-input guardrails see the calls before anyone is asked about them.
  const screened = screenCalls(reviewed, stepIndex, state, slice, log)
  return isPromise(screened)
    ? screened.then((c) => askIfNeeded(c, state, slice))
    : askIfNeeded(screened, state, slice)
}

function askIfNeeded(reviewed: Call[], state: RunState, slice: Slice): SyncOrAsync<Call[]> {
  // Asking (hashing the arguments, or the in-memory hook) is the one asynchronous part.
  for (let k = 0; k < reviewed.length; k++) {
    const c = reviewed[k]!
    if (c.status === 'awaiting_approval' && !c.approval) return ask(reviewed, state, slice)
  }
  return reviewed
}

/**
 * Asks about each reviewed call that awaits a decision and has not been asked yet: what the
 * tool needs from a person (`Tool.person`: a question, a connection) first, else the approval
 * its policy asks for. In memory (`react()`) the confirm hook decides approvals; nothing answers
 * a question there, so the run waits.
 */
async function ask(reviewed: Call[], state: RunState, slice: Slice): Promise<Call[]> {
  const now = slice.now()
  const ttl = state.budget.approvalTtlSeconds
  for (let k = 0; k < reviewed.length; k++) {
    const call = reviewed[k]!
    if (call.status !== 'awaiting_approval' || call.approval) continue
    const hook = slice.deps.confirm
    const tool = slice.registry.get(call.name)!
    const request = tool.person ? await personRequest(tool, call, state) : null
    if (typeof request === 'string')
      reviewed[k] = answeredCall(call, 'tool_error', slice.redact(request))
    else if (request) reviewed[k] = await requestItem(call, now, ttl, request)
    else if (!policyAsks(tool, state, call)) reviewed[k] = { ...call, status: 'ready' }
    else if (hook) reviewed[k] = await decideByHook(call, tool, hook, now)
    else reviewed[k] = await requestItem(call, now, ttl, null, editSchemaOf(tool, slice))
  }
  return reviewed
}

/** The JSON Schema an approver edits the arguments with; null when the tool forbids edits. */
function editSchemaOf(tool: Tool, slice: Slice): Record<string, unknown> | null {
  return tool.editable === false ? null : slice.registry.jsonSchema(tool.name)
}

/** The call needs an approval: what its tool's code policy applied, else the confirm policy. */
function policyAsks(tool: Tool, state: RunState, call: Call): boolean {
  if (call.policy) return call.policy.applied === 'ask'
  return tool.sideEffect && verdictFor(state.policy, tool) === 'ask'
}

/**
 * What the tool asks a person for this call, or null; a `person` that throws gives the text of
 * the call's `[ToolError]` instead.
 */
async function personRequest(
  tool: Tool,
  call: Call,
  state: RunState,
): Promise<PersonRequest | string | null> {
  const valid = safeParse(tool.params, call.args)
  const args = valid.success ? valid.data : call.args
  try {
    return (await tool.person!(args as never, { runId: state.id, callId: call.id })) ?? null
  } catch (err) {
    return `[ToolError] ${tool.name} was not run: it could not say what it needs from a person (${describeThrown(err)})`
  }
}

/** The phase after review: waiting for a person when any call awaits a decision, else act. */
export function phaseAfterReview(calls: Call[]): 'act' | 'await_approval' {
  return someHasStatus(calls, 'awaiting_approval') ? 'await_approval' : 'act'
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

/**
 * One call's first look; a call a person must approve comes back awaiting, not yet asked. `call`
 * is `calls[k]` of step `stepIndex`: the loop guard compares it with the calls of the steps
 * before it and with those before it in its own step.
 */
function review(
  call: Call,
  calls: Call[],
  k: number,
  stepIndex: number,
  state: RunState,
  slice: Slice,
): Call {
  if (state.budget.loopGuardWindow > 0 && repeats(call, calls, k, stepIndex, state)) {
    return loopGuarded(call, state)
  }
  const tool = slice.registry.get(call.name)
  const coded = !!tool && (!!tool.policy || !!tool.shadowPolicy || !!slice.deps.policy)
  const asks = !!tool && (policyAsks(tool, state, call) || !!tool.person || coded)
  // Nothing to look at before dispatch (which validates again, as the security boundary).
  if (!tool || (!asks && !tool.check)) return { ...call, status: 'ready' }
  return reviewClosely(call, tool, coded, state, slice)
}

/*
 * review's rarer courses are functions of their own, so that the one a call of a read-only tool
 * without checks takes stays small: what V8 compiles of a fresh isolate's step path
 * (docs/development.md#kernel-performance).
 */

/** A repeated call, answered by the loop guard. */
function loopGuarded(call: Call, state: RunState): Call {
  return answeredCall(
    call,
    'loop_guard',
    `[LoopGuard] ${call.name} was already called with these exact arguments in the last ${state.budget.loopGuardWindow} steps; its result is above. Do not repeat it: use that result, change the arguments, or finish.`,
  )
}

/**
 * A call with something to look at before dispatch: its arguments validated for the tool's own
 * check and its code policy (`coded`), then whether a person must approve or answer it.
 */
function reviewClosely(
  call: Call,
  tool: Tool,
  coded: boolean,
  state: RunState,
  slice: Slice,
): Call {
  const valid = validateArgs(call, slice.registry)
  // Dispatch reports a call that cannot run (bad arguments) with its schema; nobody is asked.
  if (!valid.ok) return { ...call, status: 'ready' }
  const problem = checkCall(tool, valid.args, { runId: state.id, callId: call.id })
  if (problem) return answeredCall(call, 'tool_error', slice.redact(`[ToolError] ${problem}`))
  if (coded) {
    const ctx = { runId: state.id, callId: call.id, agent: state.agent.name }
    const decided = decidePolicy(state.policy, tool, valid.args, ctx, slice.deps.policy)
    call = { ...call, policy: decided.record }
    if (decided.record?.applied === 'deny' && decided.record.configured !== 'deny') {
      return answeredCall(call, 'denied', slice.redact(policyDenial(call)))
    }
  }
  if (!policyAsks(tool, state, call) && !tool.person) return { ...call, status: 'ready' }
  return { ...call, status: 'awaiting_approval' }
}

/**
 * Whether a call of the same tool with the same arguments came before `calls[k]` (the loop
 * guard): in the last `loopGuardWindow` steps before step `stepIndex`, or among the calls of its
 * own step reviewed before it. Read where the calls are, with no list of them made for each step.
 */
function repeats(
  call: Call,
  calls: Call[],
  k: number,
  stepIndex: number,
  state: RunState,
): boolean {
  const { steps } = state
  for (let s = Math.max(0, stepIndex - state.budget.loopGuardWindow); s < stepIndex; s++) {
    const earlier = steps[s]!.calls
    for (let j = 0; j < earlier.length; j++) if (sameCall(earlier[j]!, call)) return true
  }
  for (let j = 0; j < k; j++) {
    if (calls[j]!.status === 'pending' && sameCall(calls[j]!, call)) return true
  }
  return false
}

function sameCall(a: Call, b: Call): boolean {
  return a.name === b.name && sameJson(a.args, b.args)
}

/** The observation of a call the tool's own policy, or the agent's, refused. */
function policyDenial(call: Call): string {
  const byTool = call.policy?.policy?.verdict === 'deny'
  const said = byTool ? call.policy?.policy : call.policy?.agent
  const whose = byTool ? 'its policy' : "the agent's policy"
  const reason = said?.reason
  return `[ToolError] ${call.name} was not run: ${whose} denied it${reason ? ` (${reason})` : ''}. Use read-only tools instead, or ask the user for permission.`
}
