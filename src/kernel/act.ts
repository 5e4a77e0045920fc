import { safeParse } from 'zod/v4/core'
import { argsHash, sameJson } from './canonical'
import { replaceCall } from './approvals'
import type { StopReason } from './budget'
import { verdictFor } from './confirm'
import {
  describeThrown,
  dispatchNow,
  isThenable,
  type DispatchContext,
  type DispatchResult,
  type ToolCallRequest,
} from './dispatch'
import { updateCall, type Approval, type Call, type RunState } from './state'
import type { Tool } from './tool'
import { stop } from './stop'
import type { Deps, Result } from './transition-types'

/** The act phase (DESIGN §3): one call's next move per transition, in call order. */
export function act(state: RunState, deps: Deps): Result | Promise<Result> {
  const stepIndex = state.steps.length - 1
  const current = state.steps[stepIndex]!
  if (current.calls.some((c) => c.status === 'pending')) return classify(state, stepIndex, deps)
  const call = current.calls.find((c) => c.status !== 'done')
  if (!call) return completeStep(state, deps)
  if (call.status === 'awaiting_approval') {
    return { state: { ...state, phase: 'await_approval' }, event: { action: 'await', bytes: 0 } }
  }
  const tool = deps.registry.get(call.name)
  if (call.status === 'denied') return finishCall(state, stepIndex, deniedCall(call), deps)
  if (call.status === 'started') {
    if (!freshStarts.has(call)) {
      // Read back from storage: the process that started it died before recording a result.
      if (!tool?.idempotent) return finishCall(state, stepIndex, unknownOutcome(call), deps)
      // Idempotent: running again with the same idempotency key is harmless (DESIGN §3).
      return runCall(
        state,
        stepIndex,
        updateCall(call, { attempts: (call.attempts ?? 0) + 1 }),
        deps,
      )
    }
    return runCall(state, stepIndex, call, deps)
  }
  if (tool?.sideEffect && needsStartRecord(call, state, tool)) {
    // Persisted before the side effect runs (DESIGN §3): a crash after this never runs it twice.
    const started = updateCall(call, { status: 'started', attempts: (call.attempts ?? 0) + 1 })
    freshStarts.add(started)
    return {
      state: replaceCall(state, stepIndex, started),
      event: { action: 'start_call', step: stepIndex, tool: call.name, callId: call.id, bytes: 0 },
    }
  }
  return runCall(state, stepIndex, call, deps)
}

/**
 * `started` records this process made and has not yet run. A `started` call read back from
 * storage is a different object, so it is not in here: that is how a resumed run knows.
 */
const freshStarts = new WeakSet<Call>()

function needsStartRecord(
  call: Call,
  state: RunState,
  tool: Parameters<typeof verdictFor>[1],
): boolean {
  if (call.argsError) return false // dispatch refuses it without running anything
  if (call.status === 'approved') return true
  return verdictFor(state.policy, tool) === 'run'
}

function deniedCall(call: Call): Call {
  const a = call.approval
  const why =
    a?.reason === 'expired'
      ? 'the approval request expired with no decision'
      : a?.reason === 'cancelled'
        ? 'the run was cancelled'
        : `it was denied by ${a?.decidedBy ?? 'the approver'}${a?.reason ? ` ("${a.reason}")` : ''}`
  const observation = `[ToolError] ${call.name} was not run: ${why}. Use read-only tools instead, or ask the user for permission.`
  return updateCall(call, {
    status: 'done',
    kind: 'denied',
    observation,
    originalSize: observation.length,
    ms: 0,
  })
}

function unknownOutcome(call: Call): Call {
  const observation =
    `[ToolError] outcome unknown: ${call.name} (call ${call.id}) was started but the run stopped ` +
    'before its result was recorded. It was not run again; check its effect before retrying.'
  return updateCall(call, {
    status: 'done',
    kind: 'outcome_unknown',
    observation,
    originalSize: observation.length,
    ms: 0,
  })
}

function runCall(
  state: RunState,
  stepIndex: number,
  call: Call,
  deps: Deps,
): Result | Promise<Result> {
  const request: ToolCallRequest = { id: call.id, name: call.name, args: call.args }
  if (call.argsError) request.argsError = call.argsError
  const ctx: DispatchContext = {
    registry: deps.registry,
    runId: state.id,
    observations: deps.observations,
    policy: state.policy,
    approved: call.approval?.decision === 'approved',
    maxObservationTokens: state.budget.maxObservationTokens,
    now: deps.now,
  }
  if (deps.confirm) ctx.confirm = deps.confirm
  if (deps.signal) ctx.signal = deps.signal
  // Synchronous tools finish without a promise (dispatchNow).
  const result = dispatchNow(request, ctx)
  if (isThenable(result)) return result.then((r) => recordResult(state, stepIndex, call, r, deps))
  return recordResult(state, stepIndex, call, result, deps)
}

function recordResult(
  state: RunState,
  stepIndex: number,
  call: Call,
  result: DispatchResult,
  deps: Deps,
): Result {
  const changes: Partial<Call> = {
    status: 'done',
    kind: result.kind,
    observation: result.observation,
    originalSize: result.originalSize,
    tokens: result.tokens,
    ms: result.ms,
  }
  if (result.truncated) changes.truncated = true
  if (result.handle) changes.handle = result.handle
  const out = finishCall(state, stepIndex, updateCall(call, changes), deps)
  out.event.bytes += result.originalSize + result.observation.length
  return out
}

/** Records a finished call: one new step and one new state, however many calls the step has. */
function finishCall(state: RunState, stepIndex: number, call: Call, deps: Deps): Result {
  const current = state.steps[stepIndex]!
  const calls = current.calls.slice()
  calls[calls.findIndex((c) => c.id === call.id)] = call
  const steps = state.steps.slice()
  steps[stepIndex] = { ...current, calls, ms: current.ms + (call.ms ?? 0) }
  const next: RunState = { ...state, steps }
  const event: Result['event'] = {
    action: 'run_call',
    step: stepIndex,
    tool: call.name,
    callId: call.id,
    bytes: 0,
  }
  if (calls.every((c) => c.status === 'done')) {
    const completed = completeStepInPlace(next, deps)
    if (completed.stopReason) event.stopReason = completed.stopReason
    return { state: completed.state, event }
  }
  return { state: next, event }
}

/** All calls of the last step have observations: update the error streak, then think again. */
function completeStep(state: RunState, deps: Deps): Result {
  const out = completeStepInPlace({ ...state }, deps)
  const event: Result['event'] = { action: 'complete_step', step: state.steps.length - 1, bytes: 0 }
  if (out.stopReason) event.stopReason = out.stopReason
  return { state: out.state, event }
}

/** `completeStep` on a state this transition already copied. */
function completeStepInPlace(
  next: RunState,
  deps: Deps,
): { state: RunState; stopReason?: StopReason } {
  const current = next.steps[next.steps.length - 1]!
  const failed = current.calls.length > 0 && current.calls.every((c) => isErrorKind(c.kind))
  const streak = failed ? next.consecutiveErrors + 1 : 0
  next.consecutiveErrors = streak
  next.phase = 'think'
  if (streak >= next.budget.maxConsecutiveErrors) {
    const last = current.calls.at(-1)?.observation ?? ''
    const out = stop(
      next,
      'tool_error_exhausted',
      deps,
      `${streak} steps in a row failed; last: ${last.slice(0, 300)}`,
    )
    return { state: out.state, stopReason: 'tool_error_exhausted' }
  }
  return { state: next }
}

function isErrorKind(kind: Call['kind']): boolean {
  return (
    kind === 'tool_error' ||
    kind === 'loop_guard' ||
    kind === 'denied' ||
    kind === 'outcome_unknown'
  )
}

/**
 * A step recorded with `pending` calls (a state saved before classification moved into think):
 * classify them in a transition of their own.
 */
async function classify(state: RunState, stepIndex: number, deps: Deps): Promise<Result> {
  const pending = classifyStep({ ...state, steps: state.steps.slice() }, stepIndex, deps)
  const out = isThenable(pending) ? await pending : pending
  const event: Result['event'] = { action: 'classify', step: stepIndex, bytes: 0 }
  if (out.stopReason) event.stopReason = out.stopReason
  return { state: out.state, event }
}

/**
 * First look at a new step's calls: loop guard, validation, then who must approve what (all at
 * once). `next` and its `steps` array are copies this transition made; the step at `stepIndex`
 * is replaced and the phase set. When every call is already answered the step completes here.
 */
export function classifyStep(
  next: RunState,
  stepIndex: number,
  deps: Deps,
): Classified | Promise<Classified> {
  const current = next.steps[stepIndex]!
  const window = next.budget.loopGuardWindow
  // Calls the loop guard compares against: the last `window` steps', then this step's so far.
  const seen: Call[] = []
  if (window > 0) {
    for (let s = Math.max(0, stepIndex - window); s < stepIndex; s++) {
      const earlier = next.steps[s]!.calls
      for (let k = 0; k < earlier.length; k++) seen.push(earlier[k]!)
    }
  }
  const now = deps.now()
  const calls: Call[] = []
  for (let k = 0; k < current.calls.length; k++) {
    const call = classifyCall(current.calls[k]!, seen, next, deps, now)
    // Approvals (argument hashes, the confirm hook) are asynchronous; everything else is not,
    // and a step of read-only calls is classified without a promise (npm run bench).
    if (isThenable(call)) return classifyRest(call, k, calls, seen, next, stepIndex, deps, now)
    calls.push(call)
  }
  return settleStep(next, stepIndex, calls, deps)
}

type Classified = { state: RunState; stopReason?: StopReason }

async function classifyRest(
  pending: PromiseLike<Call>,
  k: number,
  calls: Call[],
  seen: Call[],
  next: RunState,
  stepIndex: number,
  deps: Deps,
  now: number,
): Promise<Classified> {
  calls.push(await pending)
  const all = next.steps[stepIndex]!.calls
  for (let j = k + 1; j < all.length; j++) {
    calls.push(await classifyCall(all[j]!, seen, next, deps, now))
  }
  return settleStep(next, stepIndex, calls, deps)
}

/** One call's first look: loop guard, validation, then whether a person must approve it. */
function classifyCall(
  call: Call,
  seen: Call[],
  next: RunState,
  deps: Deps,
  now: number,
): Call | Promise<Call> {
  if (call.status !== 'pending') return call
  const window = next.budget.loopGuardWindow
  if (window > 0 && repeats(call, seen)) {
    const observation = `[LoopGuard] ${call.name} was already called with these exact arguments in the last ${window} steps; its result is above. Do not repeat it: use that result, change the arguments, or finish.`
    return updateCall(call, {
      status: 'done',
      kind: 'loop_guard',
      observation,
      originalSize: observation.length,
      ms: 0,
    })
  }
  seen.push(call)
  const tool = deps.registry.get(call.name)
  const asks =
    !!tool &&
    !call.argsError &&
    tool.sideEffect &&
    verdictFor(next.policy, tool) === 'ask' &&
    // Validate first (DESIGN §3): nobody is asked to approve a call that cannot run.
    safeParse(tool.params, call.args).success
  if (!asks) return updateCall(call, { status: 'ready' })
  // In memory (react()): the hook decides now, and its answer is recorded like a person's.
  if (deps.confirm) return decideByHook(call, tool!, deps, now)
  return requestApproval(call, now, next.budget.approvalTtlSeconds)
}

function repeats(call: Call, seen: Call[]): boolean {
  for (let k = 0; k < seen.length; k++) {
    const c = seen[k]!
    if (c.name === call.name && sameJson(c.args, call.args)) return true
  }
  return false
}

async function requestApproval(call: Call, now: number, ttlSeconds: number): Promise<Call> {
  return updateCall(call, {
    status: 'awaiting_approval',
    approval: {
      hash: await argsHash(call.name, call.args),
      requestedAt: now,
      expiresAt: now + ttlSeconds * 1000,
    },
  })
}

/** Puts the classified calls in the step; a step with every call answered completes here. */
function settleStep(next: RunState, stepIndex: number, calls: Call[], deps: Deps): Classified {
  let awaiting = false
  let allDone = true
  for (let k = 0; k < calls.length; k++) {
    const status = calls[k]!.status
    if (status === 'awaiting_approval') awaiting = true
    if (status !== 'done') allDone = false
  }
  next.steps[stepIndex] = { ...next.steps[stepIndex]!, calls }
  next.phase = awaiting ? 'await_approval' : 'act'
  if (allDone) return completeStepInPlace(next, deps)
  return { state: next }
}

async function decideByHook(call: Call, tool: Tool, deps: Deps, now: number): Promise<Call> {
  let allowed = false
  let reason: string | undefined
  try {
    allowed = await deps.confirm!({ id: call.id, name: call.name, args: call.args }, tool)
  } catch (err) {
    reason = `the confirm hook failed: ${describeThrown(err)}`
  }
  const approval: Approval = {
    hash: await argsHash(call.name, call.args),
    requestedAt: now,
    expiresAt: now,
    decision: allowed ? 'approved' : 'denied',
    decidedBy: 'confirm hook',
    decidedAt: now,
  }
  if (reason) approval.reason = reason
  return updateCall(call, { status: allowed ? 'approved' : 'denied', approval })
}
