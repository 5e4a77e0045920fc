import { safeParse } from 'zod/v4/core'
import { argsHash, canonicalJson } from './canonical'
import { pendingApprovals, expireApprovals, replaceCall } from './approvals'
import type { StopReason } from './budget'
import { verdictFor, type ConfirmHook } from './confirm'
import { buildRequest } from './context'
import {
  describeThrown,
  dispatchCall,
  type DispatchContext,
  type ToolCallRequest,
} from './dispatch'
import { ModelError } from './errors'
import { parseArgsStrict, parseArgsTolerant } from './json-loose'
import type { Model, ModelResponse, NativeToolCall } from './model'
import { FINISH, parseOutput, TEXT_PROTOCOL_FORMAT, UNPARSABLE } from './parse-output'
import { READ_OBSERVATION, readObservationTool } from './read-observation'
import { ToolRegistry } from './registry'
import type { Call, RunState, Step } from './state'
import type { ObservationStore } from './tool'
import { approxTokens } from './tokens'

/** What `advance` needs from outside: the kernel does no I/O of its own (DESIGN §2). */
export interface AdvanceDeps {
  model: Model
  /** The run's tools; `read_observation` is added automatically. */
  registry: ToolRegistry
  observations: ObservationStore
  /** Decides `ask` verdicts in memory (react()); without it they wait for `decideApproval`. */
  confirm?: ConfirmHook
  now?: () => number
  /** Cancels in-flight model and tool calls. */
  signal?: AbortSignal
  /** USD per 1K tokens, for cost in the trace and `maxCostUsd`. */
  pricing?: { promptPer1K: number; completionPer1K: number }
}

/** One transition, described for logs and slice accounting. */
export interface TransitionEvent {
  runId: string
  phase: RunState['phase']
  /** `think`, `classify`, `start_call`, `run_call`, `await`, `expire`, `stop`, `noop`, `fallback`. */
  action: string
  step?: number
  tool?: string
  callId?: string
  ms: number
  promptTokens?: number
  completionTokens?: number
  stopReason?: StopReason
  /** Approximate bytes built, parsed and serialized (the CPU proxy, DESIGN §4). */
  bytes: number
}

const withBuiltins = new WeakMap<ToolRegistry, ToolRegistry>()

/** The run's registry plus the built-in `read_observation`. */
export function runRegistry(registry: ToolRegistry): ToolRegistry {
  if (registry.get(READ_OBSERVATION)) return registry
  let full = withBuiltins.get(registry)
  if (!full) {
    full = new ToolRegistry([...registry.list(), readObservationTool])
    withBuiltins.set(registry, full)
  }
  return full
}

/** Performs exactly one transition of the step machine (DESIGN §3). Never throws on model output. */
export async function advance(state: RunState, deps: AdvanceDeps): Promise<RunState> {
  return (await transition(state, deps)).state
}

/** `advance` with a description of what it did. */
export async function transition(
  state: RunState,
  deps: AdvanceDeps,
): Promise<{ state: RunState; event: TransitionEvent }> {
  const full = fullDeps(deps)
  const started = full.now()
  const result = await step(state, full)
  const ms = Math.max(0, full.now() - started)
  // A changed state is always a fresh object made by this transition, so it may be finished in
  // place. Only active work is charged to maxSeconds; waiting for a person is not a transition.
  if (result.state !== state) result.state.activeMs += ms
  const event = result.event as TransitionEvent
  event.runId = state.id
  event.phase = result.state.phase
  event.ms = ms
  return { state: result.state, event }
}

// Built once per deps object: a transition is a hot path (npm run bench).
const depsCache = new WeakMap<AdvanceDeps, Deps>()
function fullDeps(deps: AdvanceDeps): Deps {
  let full = depsCache.get(deps)
  if (!full) {
    full = { ...deps, registry: runRegistry(deps.registry), now: deps.now ?? Date.now }
    depsCache.set(deps, full)
  }
  return full
}

type Deps = AdvanceDeps & { now: () => number }
type Result = { state: RunState; event: Omit<TransitionEvent, 'runId' | 'phase' | 'ms'> }

// Not `async`: most transitions finish synchronously, and each async layer costs a promise.
function step(state: RunState, deps: Deps): Result | Promise<Result> {
  if (state.phase === 'done') return { state, event: { action: 'noop', bytes: 0 } }
  if (state.cancelRequested || deps.signal?.aborted)
    return stop(cancelApprovals(state, deps.now()), 'cancelled', deps, 'the run was cancelled')
  switch (state.phase) {
    case 'think':
      return think(state, deps)
    case 'act':
      return act(state, deps)
    case 'await_approval': {
      const next = expireApprovals(state, deps.now())
      return { state: next, event: { action: next === state ? 'await' : 'expire', bytes: 0 } }
    }
  }
}

/** Pending approvals of a cancelled run are closed as denied, so no stale button can run them. */
function cancelApprovals(state: RunState, now: number): RunState {
  let next = state
  for (const { stepIndex, call } of pendingApprovals(state)) {
    next = replaceCall(next, stepIndex, {
      ...call,
      status: 'denied',
      approval: {
        ...call.approval!,
        decision: 'denied',
        decidedBy: 'system',
        decidedAt: now,
        reason: 'cancelled',
      },
    })
  }
  return next
}

function stop(
  state: RunState,
  reason: StopReason,
  deps: Deps,
  error?: string,
  answer = '',
): Result {
  const ok = reason === 'finish'
  return {
    state: {
      ...state,
      phase: 'done',
      result: {
        ok,
        // Failure is explicit: never a half answer that looks like success (DESIGN §1.4).
        answer: ok ? answer : '',
        stopReason: reason,
        ...(error ? { error } : {}),
        finishedAt: deps.now(),
      },
    },
    event: { action: 'stop', stopReason: reason, bytes: 0 },
  }
}

async function think(state: RunState, deps: Deps): Promise<Result> {
  const { budget } = state
  if (state.steps.length >= budget.maxSteps) {
    return stop(
      state,
      'max_steps',
      deps,
      `reached maxSteps (${budget.maxSteps}) without a final answer`,
    )
  }
  if (state.activeMs >= budget.maxSeconds * 1000) {
    return stop(state, 'timeout', deps, `used the ${budget.maxSeconds}s time budget`)
  }
  if (budget.maxCostUsd !== undefined && (state.usage.costUsd ?? 0) >= budget.maxCostUsd) {
    return stop(
      state,
      'cost_budget',
      deps,
      `spent $${state.usage.costUsd} of $${budget.maxCostUsd}`,
    )
  }
  const built = buildRequest(state, deps.registry)
  if (state.usage.promptTokens + built.tokens > budget.maxPromptTokens) {
    return stop(
      state,
      'token_budget',
      deps,
      `the next request (~${built.tokens} tokens) would pass maxPromptTokens (${budget.maxPromptTokens}; ${state.usage.promptTokens} used)`,
    )
  }
  const remainingMs = budget.maxSeconds * 1000 - state.activeMs
  const startedAt = deps.now()
  let response: ModelResponse
  try {
    response = await deps.model.complete({
      ...built.request,
      timeoutMs: remainingMs,
      ...(deps.signal ? { signal: deps.signal } : {}),
    })
  } catch (err) {
    // A cancel surfaces as the abort reason thrown by the adapter: that is not a model error.
    if (deps.signal?.aborted) {
      return stop(cancelApprovals(state, deps.now()), 'cancelled', deps, 'the run was cancelled')
    }
    const code = err instanceof ModelError ? err.options.code : undefined
    if (
      code === 'tools_unsupported' &&
      state.protocolSetting === 'auto' &&
      state.protocol === 'native'
    ) {
      return {
        state: { ...state, protocol: 'text' },
        event: { action: 'fallback', bytes: built.bytes },
      }
    }
    if (deps.now() - startedAt >= remainingMs) {
      return stop(
        state,
        'timeout',
        deps,
        `the model call used the rest of the ${budget.maxSeconds}s budget`,
      )
    }
    return stop(state, 'model_error', deps, describeThrown(err))
  }
  const modelMs = Math.max(0, deps.now() - startedAt)
  const text = response.text ?? ''
  const usage = response.usage
  const promptTokens = usage?.promptTokens ?? built.tokens
  const completionTokens =
    usage?.completionTokens ?? approxTokens(text) + toolCallTokens(response.toolCalls)
  const costUsd = deps.pricing
    ? (promptTokens * deps.pricing.promptPer1K + completionTokens * deps.pricing.completionPer1K) /
      1000
    : undefined
  const base: Omit<Step, 'kind' | 'thought' | 'calls'> = {
    i: state.steps.length,
    finishReason: response.finishReason,
    promptTokens,
    completionTokens,
    estimated: !usage,
    ms: modelMs,
    modelMs,
    at: startedAt,
  }
  if (costUsd !== undefined) base.costUsd = costUsd
  if (text) base.text = text
  const next: RunState = {
    ...state,
    // The trace names who answered: the provider's model name, else the Model's own name.
    model: response.model ?? state.model ?? deps.model.name,
    usage: {
      promptTokens: state.usage.promptTokens + promptTokens,
      completionTokens: state.usage.completionTokens + completionTokens,
      estimated: state.usage.estimated || !usage,
      modelCalls: state.usage.modelCalls + 1,
    },
  }
  if (costUsd !== undefined || state.usage.costUsd !== undefined) {
    next.usage.costUsd = (state.usage.costUsd ?? 0) + (costUsd ?? 0)
  }
  const bytes = built.bytes + text.length + toolCallBytes(response.toolCalls)
  const event = { step: base.i, promptTokens, completionTokens, bytes }

  if (response.finishReason === 'content_filter') {
    const recorded = withStep(next, { ...base, kind: 'format_error', thought: text, calls: [] })
    const out = stop(
      recorded,
      'content_filter',
      deps,
      'the provider withheld the answer (content_filter)',
    )
    return { state: out.state, event: { ...event, action: 'think', stopReason: 'content_filter' } }
  }
  const interpreted =
    state.protocol === 'native'
      ? interpretNative(response, base.i, deps)
      : interpretText(text, base.i, deps)
  if (response.finishReason === 'length') {
    // A cut-off reply is never an answer, and its tool arguments may be cut off too.
    return formatError(
      next,
      base,
      interpreted.thought,
      'your reply was cut off at the token limit. Reply again, shorter.',
      state,
      deps,
      event,
    )
  }
  if (interpreted.kind === 'format_error') {
    return formatError(next, base, interpreted.thought, interpreted.problem, state, deps, event)
  }
  if (interpreted.kind === 'finish') {
    const recorded = withStep(next, {
      ...base,
      kind: 'finish',
      thought: interpreted.thought,
      calls: [],
      answer: interpreted.answer,
    })
    const out = stop(recorded, 'finish', deps, undefined, interpreted.answer)
    return {
      state: { ...out.state, consecutiveFormatErrors: 0 },
      event: { ...event, action: 'think', stopReason: 'finish' },
    }
  }
  const actionStep = base as Step
  actionStep.kind = 'action'
  actionStep.thought = interpreted.thought
  actionStep.calls = interpreted.calls
  // `next` is this transition's own copy: finish it in place.
  next.steps = appendStep(state.steps, actionStep)
  next.phase = 'act'
  next.consecutiveFormatErrors = 0
  return {
    state: next,
    event: { ...event, action: 'think', tool: callNames(interpreted.calls) },
  }
}

function formatError(
  next: RunState,
  base: Omit<Step, 'kind' | 'thought' | 'calls'>,
  thought: string,
  problem: string,
  state: RunState,
  deps: Deps,
  event: Omit<Result['event'], 'action'>,
): Result {
  const formatErrorText =
    state.protocol === 'native'
      ? `[FormatError] ${problem} Call one of the tools, or reply with the final answer as plain text.`
      : `[FormatError] ${problem}\n${TEXT_PROTOCOL_FORMAT}`
  const streak = state.consecutiveFormatErrors + 1
  const recorded: RunState = {
    ...withStep(next, {
      ...base,
      kind: 'format_error',
      thought,
      calls: [],
      formatError: formatErrorText,
    }),
    consecutiveFormatErrors: streak,
  }
  if (streak >= state.budget.maxConsecutiveErrors) {
    const out = stop(
      recorded,
      'unparsable_exhausted',
      deps,
      `${streak} unusable replies in a row: ${problem}`,
    )
    return {
      state: out.state,
      event: { ...event, action: 'think', stopReason: 'unparsable_exhausted' },
    }
  }
  return { state: recorded, event: { ...event, action: 'think' } }
}

type Interpreted =
  | { kind: 'action'; thought: string; calls: Call[] }
  | { kind: 'finish'; thought: string; answer: string }
  | { kind: 'format_error'; thought: string; problem: string }

function interpretText(text: string, i: number, deps: Deps): Interpreted {
  const parsed = parseOutput(text)
  const { name, args } = parsed.call
  if (name === UNPARSABLE) {
    return {
      kind: 'format_error',
      thought: parsed.thought,
      problem: text.trim() ? 'no action could be read from your reply.' : 'your reply was empty.',
    }
  }
  if (name === FINISH) {
    const answer = typeof args.answer === 'string' ? args.answer.trim() : ''
    if (!answer) {
      return {
        kind: 'format_error',
        thought: parsed.thought,
        problem: 'finish needs a non-empty "answer" string.',
      }
    }
    return { kind: 'finish', thought: parsed.thought, answer }
  }
  const call = newCall(`s${i}c0`, name, args)
  // Side effects need exact JSON, as in the native protocol: a repaired object never runs one.
  if (parsed.call.repaired && deps.registry.get(name)?.sideEffect) {
    call.argsError =
      'the action was not valid JSON (it needed repairs to read: quotes, commas or brackets)'
  }
  return { kind: 'action', thought: parsed.thought, calls: [call] }
}

function interpretNative(response: ModelResponse, i: number, deps: Deps): Interpreted {
  const thought = (response.text ?? '').trim()
  const toolCalls = response.toolCalls ?? []
  if (!toolCalls.length) {
    if (!thought)
      return { kind: 'format_error', thought, problem: 'your reply had no text and no tool call.' }
    return { kind: 'finish', thought: '', answer: thought }
  }
  const seen = new Set<string>()
  const calls = toolCalls.map((tc, k) => {
    // Some providers send empty or repeated ids; each result must pair with exactly one call.
    const id = tc.id && !seen.has(tc.id) ? tc.id : `s${i}c${k}`
    seen.add(id)
    const tool = deps.registry.get(tc.function.name)
    // Side effects parse strictly: a repaired argument object never becomes a side effect.
    const parsed = tool?.sideEffect
      ? parseArgsStrict(tc.function.arguments)
      : parseArgsTolerant(tc.function.arguments)
    const call = newCall(id, tc.function.name, parsed.ok ? parsed.value : {})
    call.rawArgs = tc.function.arguments
    if (!parsed.ok) call.argsError = parsed.error
    return call
  })
  return { kind: 'action', thought, calls }
}

function newCall(id: string, name: string, args: Record<string, unknown>): Call {
  return { id, name, args, status: 'pending' }
}

function withStep(state: RunState, step: Step): RunState {
  return { ...state, steps: appendStep(state.steps, step) }
}

function appendStep(steps: Step[], step: Step): Step[] {
  const out = steps.slice()
  out.push(step)
  return out
}

function callNames(calls: Call[]): string {
  if (calls.length === 1) return calls[0]!.name
  return calls.map((c) => c.name).join(',')
}

function act(state: RunState, deps: Deps): Result | Promise<Result> {
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
      return runCall(state, stepIndex, { ...call, attempts: (call.attempts ?? 0) + 1 }, deps)
    }
    return runCall(state, stepIndex, call, deps)
  }
  if (tool?.sideEffect && needsStartRecord(call, state, tool, deps)) {
    // Persisted before the side effect runs (DESIGN §3): a crash after this never runs it twice.
    const started: Call = { ...call, status: 'started', attempts: (call.attempts ?? 0) + 1 }
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
  tool: { sideEffect: boolean } & Parameters<typeof verdictFor>[1],
  deps: Deps,
): boolean {
  if (call.argsError) return false // dispatch refuses it without running anything
  if (call.status === 'approved') return true
  const verdict = verdictFor(state.policy, tool)
  return verdict === 'run' || (verdict === 'ask' && !!deps.confirm)
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
  return {
    ...call,
    status: 'done',
    kind: 'denied',
    observation,
    originalSize: observation.length,
    ms: 0,
  }
}

function unknownOutcome(call: Call): Call {
  const observation =
    `[ToolError] outcome unknown: ${call.name} (call ${call.id}) was started but the run stopped ` +
    'before its result was recorded. It was not run again; check its effect before retrying.'
  return {
    ...call,
    status: 'done',
    kind: 'outcome_unknown',
    observation,
    originalSize: observation.length,
    ms: 0,
  }
}

async function runCall(
  state: RunState,
  stepIndex: number,
  call: Call,
  deps: Deps,
): Promise<Result> {
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
  const result = await dispatchCall(request, ctx)
  const done: Call = {
    ...call,
    status: 'done',
    kind: result.kind,
    observation: result.observation,
    originalSize: result.originalSize,
    ms: result.ms,
  }
  if (result.truncated) done.truncated = true
  if (result.handle) done.handle = result.handle
  const out = finishCall(state, stepIndex, done, deps)
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

/** First look at a step's calls: loop guard, then who must approve what (all at once). */
async function classify(state: RunState, stepIndex: number, deps: Deps): Promise<Result> {
  const current = state.steps[stepIndex]!
  const window = state.budget.loopGuardWindow
  const recent = new Set<string>()
  for (const s of state.steps.slice(Math.max(0, stepIndex - window), stepIndex)) {
    for (const c of s.calls) recent.add(callKey(c))
  }
  const now = deps.now()
  let awaiting = false
  const calls: Call[] = []
  for (const call of current.calls) {
    if (call.status !== 'pending') {
      calls.push(call)
      continue
    }
    const key = callKey(call)
    if (window > 0 && recent.has(key)) {
      const observation = `[LoopGuard] ${call.name} was already called with these exact arguments in the last ${window} steps; its result is above. Do not repeat it: use that result, change the arguments, or finish.`
      calls.push({
        ...call,
        status: 'done',
        kind: 'loop_guard',
        observation,
        originalSize: observation.length,
        ms: 0,
      })
      continue
    }
    recent.add(key)
    const tool = deps.registry.get(call.name)
    const needsPerson =
      !!tool &&
      !call.argsError &&
      tool.sideEffect &&
      !deps.confirm &&
      verdictFor(state.policy, tool) === 'ask' &&
      // Validate first (DESIGN §3): nobody is asked to approve a call that cannot run.
      safeParse(tool.params, call.args).success
    if (needsPerson) {
      awaiting = true
      calls.push({
        ...call,
        status: 'awaiting_approval',
        approval: {
          hash: await argsHash(call.name, call.args),
          requestedAt: now,
          expiresAt: now + state.budget.approvalTtlSeconds * 1000,
        },
      })
      continue
    }
    calls.push({ ...call, status: 'ready' })
  }
  const steps = state.steps.slice()
  steps[stepIndex] = { ...current, calls }
  let next: RunState = { ...state, steps, phase: awaiting ? 'await_approval' : 'act' }
  if (calls.every((c) => c.status === 'done')) return completeStep(next, deps)
  return { state: next, event: { action: 'classify', step: stepIndex, bytes: 0 } }
}

function callKey(call: Call): string {
  return `${call.name}\u0000${canonicalJson(call.args)}`
}

function toolCallTokens(calls: NativeToolCall[] | undefined): number {
  let n = 0
  for (const c of calls ?? []) n += approxTokens(c.function.arguments) + 4
  return n
}

function toolCallBytes(calls: NativeToolCall[] | undefined): number {
  let n = 0
  for (const c of calls ?? []) n += c.function.arguments.length
  return n
}

export { pendingApprovals }
