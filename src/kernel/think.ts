import { classifyStep } from './act'
import type { StopReason } from './budget'
import { ModelError } from './errors'
import { buildRequest, type BuiltRequest } from './context'
import { describeThrown, isThenable } from './dispatch'
import { parseArgsStrict, parseArgsTolerant } from './parse/index'
import type { ModelRequest, ModelResponse, NativeToolCall } from './model'
import { FINISH, parseOutput, TEXT_PROTOCOL_FORMAT, UNPARSABLE } from './parse/index'
import { copyState, type Call, type RunState, type Step } from './state'
import { cancelApprovals, cancelMessage, stop } from './stop'
import { approxTokens } from './tokens'
import { toolShapesOf } from './tool-shapes'
import type { Deps, Result } from './transition-types'

/**
 * The think phase (DESIGN §3): check budgets, ask the model once, record the step. Not `async`:
 * an async function's frame holds every register of its body, and this one is large; a `then`
 * on the model's promise costs a fraction of that (npm run bench).
 */
export function think(state: RunState, deps: Deps): Result | Promise<Result> {
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
  const built = buildRequest(state, deps.registry, deps.render)
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
  // Built field by field: on V8, a spread that adds keys costs about 1 µs a key (npm run bench).
  const request: ModelRequest = {
    protocol: built.request.protocol,
    messages: built.request.messages,
    timeoutMs: remainingMs,
  }
  if (built.request.tools) request.tools = built.request.tools
  if (deps.signal) request.signal = deps.signal
  let pending: Promise<ModelResponse>
  try {
    pending = Promise.resolve(deps.model.complete(request))
  } catch (err) {
    return modelFailed(state, deps, built.bytes, startedAt, remainingMs, err)
  }
  return pending.then(
    (response) => recordResponse(state, deps, built, startedAt, response),
    (err: unknown) => modelFailed(state, deps, built.bytes, startedAt, remainingMs, err),
  )
}

/** The model call threw: a cancel, a protocol fallback, the time budget, or a model error. */
function modelFailed(
  state: RunState,
  deps: Deps,
  bytes: number,
  startedAt: number,
  remainingMs: number,
  err: unknown,
): Result {
  // A cancel surfaces as the abort reason thrown by the adapter: that is not a model error.
  if (deps.signal?.aborted) {
    return stop(cancelApprovals(state, deps.now()), 'cancelled', deps, cancelMessage(state, deps))
  }
  const code = err instanceof ModelError ? err.options.code : undefined
  if (
    code === 'tools_unsupported' &&
    state.protocolSetting === 'auto' &&
    state.protocol === 'native'
  ) {
    return { state: { ...state, protocol: 'text' }, event: { action: 'fallback', bytes } }
  }
  if (deps.now() - startedAt >= remainingMs) {
    return stop(
      state,
      'timeout',
      deps,
      `the model call used the rest of the ${state.budget.maxSeconds}s budget`,
    )
  }
  return stop(state, 'model_error', deps, describeThrown(err))
}

/** The model answered: record the step, and classify its calls. */
function recordResponse(
  state: RunState,
  deps: Deps,
  built: BuiltRequest,
  startedAt: number,
  response: ModelResponse,
): Result | Promise<Result> {
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
  const base: StepBase = {
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
  const next = copyState(state)
  // The trace names who answered: the provider's model name, else the Model's own name.
  next.model = response.model ?? state.model ?? deps.model.name
  next.usage = {
    promptTokens: state.usage.promptTokens + promptTokens,
    completionTokens: state.usage.completionTokens + completionTokens,
    estimated: state.usage.estimated || !usage,
    modelCalls: state.usage.modelCalls + 1,
  }
  if (costUsd !== undefined || state.usage.costUsd !== undefined) {
    next.usage.costUsd = (state.usage.costUsd ?? 0) + (costUsd ?? 0)
  }
  const bytes = built.bytes + text.length + toolCallBytes(response.toolCalls)
  const event: Result['event'] = {
    action: 'think',
    step: base.i,
    promptTokens,
    completionTokens,
    bytes,
  }

  if (response.finishReason === 'content_filter') {
    recordStep(next, base, 'format_error', text, [])
    const out = stop(
      next,
      'content_filter',
      deps,
      'the provider withheld the answer (content_filter)',
    )
    event.stopReason = 'content_filter'
    return { state: out.state, event }
  }
  const interpreted =
    state.protocol === 'native'
      ? interpretNative(response, base.i, deps, state.steps)
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
    recordStep(next, base, 'finish', interpreted.thought, []).answer = interpreted.answer
    const out = stop(next, 'finish', deps, undefined, interpreted.answer)
    out.state.consecutiveFormatErrors = 0
    event.stopReason = 'finish'
    return { state: out.state, event }
  }
  // The calls are classified in this same transition (loop guard, validation, approvals), so a
  // step is saved once, ready to act.
  const actionStep = recordStep(next, base, 'action', interpreted.thought, interpreted.calls)
  next.consecutiveFormatErrors = 0
  next.phase = 'act'
  event.tool = callNames(interpreted.calls)
  // Cancelled while the model was answering: record the reply, ask nobody about its calls.
  if (deps.signal?.aborted) {
    const out = stop(next, 'cancelled', deps, cancelMessage(next, deps))
    event.stopReason = 'cancelled'
    return { state: out.state, event }
  }
  // If classifying fails (a tool schema that throws, hashing), the reply is still recorded with
  // its calls pending: the next transition classifies them, and a lasting fault ends the run
  // with the step and its usage in the trace.
  const unclassified = () => {
    next.steps[base.i] = actionStep
    next.phase = 'act'
    return { state: next, event }
  }
  let classified: ReturnType<typeof classifyStep>
  try {
    classified = classifyStep(next, base.i, deps)
  } catch {
    return unclassified()
  }
  if (isThenable(classified)) {
    return classified.then((c) => classifiedResult(c, event), unclassified)
  }
  return classifiedResult(classified, event)
}

function classifiedResult(
  classified: { state: RunState; stopReason?: StopReason },
  event: Result['event'],
): Result {
  if (classified.stopReason) event.stopReason = classified.stopReason
  return { state: classified.state, event }
}

function formatError(
  next: RunState,
  base: StepBase,
  thought: string,
  problem: string,
  state: RunState,
  deps: Deps,
  event: Result['event'],
): Result {
  const formatErrorText =
    state.protocol === 'native'
      ? `[FormatError] ${problem} Call one of the tools, or reply with the final answer as plain text.`
      : `[FormatError] ${problem}\n${TEXT_PROTOCOL_FORMAT}`
  const streak = state.consecutiveFormatErrors + 1
  recordStep(next, base, 'format_error', thought, []).formatError = formatErrorText
  next.consecutiveFormatErrors = streak
  if (streak >= state.budget.maxConsecutiveErrors) {
    const out = stop(
      next,
      'unparsable_exhausted',
      deps,
      `${streak} unusable replies in a row: ${problem}`,
    )
    event.stopReason = 'unparsable_exhausted'
    return { state: out.state, event }
  }
  return { state: next, event }
}

type Interpreted =
  | { kind: 'action'; thought: string; calls: Call[] }
  | { kind: 'finish'; thought: string; answer: string }
  | { kind: 'format_error'; thought: string; problem: string }

function interpretText(text: string, i: number, deps: Deps): Interpreted {
  const parsed = parseOutput(text, { tools: toolShapesOf(deps.registry) })
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

/** Calls run per model turn; the rest are answered with a [ToolError]. */
export const MAX_CALLS_PER_STEP = 16

function interpretNative(
  response: ModelResponse,
  i: number,
  deps: Deps,
  earlier: Step[],
): Interpreted {
  const thought = (response.text ?? '').trim()
  const toolCalls = response.toolCalls ?? []
  if (!toolCalls.length) {
    if (!thought)
      return { kind: 'format_error', thought, problem: 'your reply had no text and no tool call.' }
    return { kind: 'finish', thought: '', answer: thought }
  }
  // Call ids key observation handles, idempotency keys and approvals for the whole run, so they
  // must be unique in the run, not just in this reply.
  const calls: Call[] = []
  const known = deps.render.callIds(earlier)
  for (let k = 0; k < toolCalls.length; k++) {
    const tc = toolCalls[k]!
    // Some providers send empty or repeated ids; each result must pair with exactly one call.
    const id = tc.id && !idTaken(tc.id, earlier, calls, known) ? tc.id : `s${i}c${k}`
    const tool = deps.registry.get(tc.function.name)
    // Side effects parse strictly: a repaired argument object never becomes a side effect.
    const parsed = tool?.sideEffect
      ? parseArgsStrict(tc.function.arguments)
      : parseArgsTolerant(tc.function.arguments)
    const call = newCall(id, tc.function.name, parsed.ok ? parsed.value : {})
    call.rawArgs = tc.function.arguments
    if (!parsed.ok) call.argsError = parsed.error
    if (k >= MAX_CALLS_PER_STEP) {
      // A step is stored as one row (2 MB at most): extra calls are answered, never run.
      call.argsError = `too many calls in one turn (at most ${MAX_CALLS_PER_STEP}); send the rest in the next turn.`
    }
    calls.push(call)
  }
  return { kind: 'action', thought, calls }
}

/** Whether a call id is already used in the run: the render cache's set, else a scan. */
function idTaken(
  id: string,
  earlier: Step[],
  current: Call[],
  known?: ReadonlySet<string>,
): boolean {
  for (const c of current) if (c.id === id) return true
  if (known) return known.has(id)
  for (let s = earlier.length - 1; s >= 0; s--) {
    for (const c of earlier[s]!.calls) if (c.id === id) return true
  }
  return false
}

function newCall(id: string, name: string, args: Record<string, unknown>): Call {
  return { id, name, args, status: 'pending' }
}

/** What think knows of a step before it reads the reply. */
type StepBase = Omit<Step, 'kind' | 'thought' | 'calls'>

/**
 * Completes the step this think started (`base`) and appends it to `next`, this transition's
 * own copy of the state.
 */
function recordStep(
  next: RunState,
  base: StepBase,
  kind: Step['kind'],
  thought: string,
  calls: Call[],
): Step {
  const step = base as Step
  step.kind = kind
  step.thought = thought
  step.calls = calls
  next.steps = appendStep(next.steps, step)
  return step
}

function appendStep(steps: Step[], step: Step): Step[] {
  // concat allocates the exact length; slice then push over-allocates and copies twice.
  return steps.concat([step])
}

function callNames(calls: Call[]): string {
  if (calls.length === 1) return calls[0]!.name
  return calls.map((c) => c.name).join(',')
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
