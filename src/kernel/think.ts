import { cancelApprovals } from './approvals'
import type { BuiltRequest } from './context'
import { describeThrown } from './describe-thrown'
import { ModelError } from '../errors/model-error'
import type { ModelRequest, ModelResponse } from './model'
import { FINAL_ANSWER_TOOL, textFormatOf } from './system-prompt'
import { readNativeReply, readTextReply, type Reading } from './reply'
import { countLostCall, startModelCall } from './model-call'
import { allHaveStatus } from './calls'
import { phaseAfterReview, reviewCalls } from './review'
import { errorStreak } from './error-streak'
import { copyState, updateState } from './update-state'
import {
  type Call,
  type ModelCall,
  type Phase,
  type RunState,
  type Step,
  type Usage,
} from './state'
import { isPromise, type SyncOrAsync } from './sync-or-async'
import { approxTokens } from './tokens'
import { needsInputScreen, screenAnswer, screenInput } from './guardrails/checkpoints'
import { stopTripped, trippedOf, withScreened, type Screened } from './guardrails/screen'
import { stepCost, toolCallBytes, toolCallTokens } from './reply-cost'
import {
  cancelMessage,
  completeStep,
  stop,
  stopped,
  transitionTo,
  type Slice,
  type Transition,
} from './transition'

/**
 * The think phase (docs/architecture.md), in two transitions. The first checks the budgets and
 * writes the model call's record (`RunState.modelCall`), persisted before the call is made like
 * a side effect's `started`. The second, in the same slice, asks the model once, records its
 * reply as a step and reviews the step's calls, so a step is saved once, ready to act.
 *
 * A record this slice did not write means the process that wrote it died while the model was
 * answering: that call was made and its answer lost. It is counted (its prompt tokens estimated,
 * and charged to the token and cost budgets, so a crash loop cannot evade them), and the call is
 * made again.
 */
export function think(state: RunState, slice: Slice, started: number): SyncOrAsync<Transition> {
  const record = state.modelCall
  if (record && slice.startedModelCalls.has(record.step)) {
    return callModel(state, record, slice, started)
  }
  if (needsInputScreen(state, slice)) return screenInput(state, slice)
  return startModelCall(state, slice, started)
}

/** The model call, made at once: it counts from the transition's start (`started`). */
async function callModel(
  state: RunState,
  record: ModelCall,
  slice: Slice,
  started: number,
): Promise<Transition> {
  const built = slice.render.build(state, slice.registry)
  const remainingMs = state.budget.maxSeconds * 1000 - state.activeMs
  const { protocol, messages, tools, temperature } = built.request
  const request: ModelRequest = tools
    ? { protocol, messages, tools, timeoutMs: remainingMs }
    : { protocol, messages, timeoutMs: remainingMs }
  if (temperature !== undefined) request.temperature = temperature
  if (slice.deps.signal) request.signal = slice.deps.signal
  // An answer the output guardrails have not seen is not streamed: a live delta cannot be taken
  // back once a rewrite or a tripwire says it should not have gone out.
  const watch = slice.guardrails.output.length ? undefined : slice.deps.onModelText
  // Each live delta is redacted on its own: a secret split across two deltas is not caught here
  // (the recorded reply is redacted whole).
  if (watch) {
    request.onText = (delta) => watch(record.step, protocol, slice.redact(delta), record.attempt)
  }
  const startedAt = started
  let response: ModelResponse
  try {
    response = await slice.deps.model.complete(request)
  } catch (err) {
    return modelFailed(state, record, slice, built.bytes, startedAt, remainingMs, err)
  }
  const { redact } = slice.deps
  const reply = redact ? redactReply(response, redact) : response
  return recordReply(state, slice, built, startedAt, record, reply)
}

/**
 * The reply with secrets taken out of its text and its calls' arguments before anything reads
 * it: a provider that echoes a secret (or a model repeating one) records none, and a call can
 * never carry one out to a tool.
 */
function redactReply(response: ModelResponse, redact: (text: string) => string): ModelResponse {
  const out: ModelResponse = { ...response }
  if (typeof response.text === 'string') out.text = redact(response.text)
  if (response.toolCalls) {
    out.toolCalls = response.toolCalls.map((c) => ({
      ...c,
      function: { ...c.function, arguments: redact(c.function.arguments) },
    }))
  }
  return out
}

/** The model call threw: a cancel, a protocol fallback, the time budget, or a model error. */
function modelFailed(
  state: RunState,
  record: ModelCall,
  slice: Slice,
  bytes: number,
  startedAt: number,
  remainingMs: number,
  err: unknown,
): Transition {
  // A cancel surfaces as the abort reason thrown by the adapter: that is not a model error.
  if (slice.deps.signal?.aborted) {
    // The request was made and its answer dropped: counted like one a crash lost.
    const counted = countLostCall(state, record, slice)
    const cancelled = cancelApprovals(counted, slice.now())
    return stopped(cancelled, 'cancelled', slice, cancelMessage(state, slice))
  }
  const code = err instanceof ModelError ? err.options.code : undefined
  if (
    code === 'tools_unsupported' &&
    state.protocolSetting === 'auto' &&
    state.protocol === 'native'
  ) {
    return transitionTo(updateState(state, { protocol: 'text', modelCall: null }), 'fallback', {
      bytes,
    })
  }
  if (slice.now() - startedAt >= remainingMs) {
    const why = `the model call used the rest of the ${state.budget.maxSeconds}s budget`
    // The request was made and its answer never came: counted like one a crash lost.
    return stopped(countLostCall(state, record, slice), 'timeout', slice, why)
  }
  // The provider answered with an error: the call was made, and usage says so (no tokens).
  const usage = { ...state.usage, modelCalls: state.usage.modelCalls + 1 }
  return stopped(updateState(state, { usage }), 'model_error', slice, describeThrown(err))
}

/**
 * The step a reply makes, made once when the reply comes in: what the reply says (`kind`,
 * `thought`, `calls`, `answer`, `formatError`) is filled in by `stepOf` once it is read. Nobody
 * else holds it until then.
 */
type StepBase = Step

/** The model answered: record the step, and review its calls. */
function recordReply(
  state: RunState,
  slice: Slice,
  built: BuiltRequest,
  startedAt: number,
  record: ModelCall,
  response: ModelResponse,
): SyncOrAsync<Transition> {
  const { deps } = slice
  const modelMs = Math.max(0, slice.now() - startedAt)
  const text = response.text ?? ''
  const usage = response.usage
  const promptTokens = usage?.promptTokens ?? built.tokens
  const completionTokens =
    usage?.completionTokens ?? approxTokens(text) + toolCallTokens(response.toolCalls)
  const cachedPromptTokens = usage?.cachedPromptTokens ?? null
  const costUsd = deps.pricing
    ? stepCost(deps.pricing, promptTokens, cachedPromptTokens ?? 0, completionTokens)
    : null
  const base: StepBase = {
    i: state.steps.length,
    kind: 'action',
    thought: '',
    text: text || null,
    calls: NO_CALLS,
    answer: null,
    formatError: null,
    finishReason: response.finishReason,
    promptTokens,
    completionTokens,
    estimated: !usage,
    costUsd,
    cachedPromptTokens,
    elidedSteps: built.cut.steps,
    elidedTokens: built.cut.tokens,
    toolSpecTokens: built.toolSpecTokens,
    lostModelCalls: record.attempt - 1,
    responseModel: response.model || null,
    responseId: response.id || null,
    ms: modelMs,
    modelMs,
    at: startedAt,
  }
  const spent = state.usage
  const reply: Reply = {
    // The trace names who answered: the provider's model name, else the Model's own name.
    model: response.model ?? state.model ?? deps.model.name,
    usage: {
      promptTokens: spent.promptTokens + promptTokens,
      completionTokens: spent.completionTokens + completionTokens,
      estimated: spent.estimated || !usage,
      costUsd:
        costUsd === null && spent.costUsd === null ? null : (spent.costUsd ?? 0) + (costUsd ?? 0),
      cachedPromptTokens: spent.cachedPromptTokens + (cachedPromptTokens ?? 0),
      modelCalls: spent.modelCalls + 1,
      lostModelCalls: spent.lostModelCalls,
      lostPromptTokens: spent.lostPromptTokens,
    },
  }
  const bytes = built.bytes + text.length + toolCallBytes(response.toolCalls)

  if (response.finishReason === 'content_filter') return filtered(state, reply, base, bytes, slice)
  const reading: Reading =
    state.protocol === 'native'
      ? readNativeReply(
          response,
          base.i,
          slice.registry,
          slice.callIds.of(state),
          state.agent.output,
        )
      : readTextReply(text, base.i, slice.registry, state.agent.output)
  if (response.finishReason === 'length') return cutOff(state, reply, base, reading, bytes, slice)
  if (reading.kind !== 'action') return recordNoCalls(state, reply, base, reading, bytes, slice)
  // The calls' names for the event; one call (the usual step) needs no array and no join.
  const { calls: asked } = reading
  const tool = asked.length === 1 ? asked[0]!.name : asked.map((c) => c.name).join(',')
  return reviewStep({ state, reply, base, thought: reading.thought, bytes, slice, tool }, asked)
}

/*
 * recordReply's rarer courses are functions of their own, so that the one every action step
 * runs stays small: V8 optimizes a function once the bytecode it has run adds up to a multiple of
 * its size, and recordReply whole stayed unoptimized through a fresh process's first 2k steps
 * (docs/development.md#kernel-performance).
 */

/** A reply the provider withheld: recorded as an unusable step, and the run ends. */
function filtered(
  state: RunState,
  reply: Reply,
  base: StepBase,
  bytes: number,
  slice: Slice,
): Transition {
  const withheld = withStep(state, reply, stepOf(base, 'format_error', base.text ?? '', []))
  const why = 'the provider withheld the answer (content_filter)'
  return thoughtOf(stop(withheld, 'content_filter', slice, why), base, bytes, null)
}

/** A reply cut off at the token limit: never an answer, and its tool arguments may be cut too. */
function cutOff(
  state: RunState,
  reply: Reply,
  base: StepBase,
  reading: Reading,
  bytes: number,
  slice: Slice,
): Transition {
  const problem = 'your reply was cut off at the token limit. Reply again, shorter.'
  const recorded = formatError(state, reply, base, reading.thought, problem, slice)
  return thoughtOf(recorded, base, bytes, null)
}

/** A reply without calls: unusable, or the final answer. */
function recordNoCalls(
  state: RunState,
  reply: Reply,
  base: StepBase,
  reading: Exclude<Reading, { kind: 'action' }>,
  bytes: number,
  slice: Slice,
): SyncOrAsync<Transition> {
  if (reading.kind === 'format_error') {
    const failed = reading.output === true
    const recorded = formatError(
      state,
      reply,
      base,
      reading.thought,
      reading.problem,
      slice,
      failed,
    )
    return thoughtOf(recorded, base, bytes, null)
  }
  const step = stepOf(base, 'finish', reading.thought, [], reading.answer)
  const finished = withStep(state, reply, step)
  if (slice.guardrails.output.length) {
    return screenAnswer(
      finished,
      { answer: reading.answer, output: reading.output ?? null },
      slice,
      (s: RunState) => thoughtOf(s, base, bytes, null),
    )
  }
  const output = reading.output ?? null
  return thoughtOf(stop(finished, 'finish', slice, null, reading.answer, output), base, bytes, null)
}

/** A reply with calls: its step recorded with the calls reviewed. */
function reviewStep(acted: Acted, asked: Call[]): SyncOrAsync<Transition> {
  const { state, base, bytes, slice, tool } = acted
  // Cancelled while the model was answering: record the reply, ask nobody about its calls.
  if (slice.deps.signal?.aborted) {
    const recorded = acting(acted, asked, 'act')
    const cancelled = stop(recorded, 'cancelled', slice, cancelMessage(recorded, slice))
    return thoughtOf(cancelled, base, bytes, tool)
  }
  // If review fails (a tool schema that throws, hashing), the reply is still recorded with its
  // calls pending: the next transition reviews them, and a lasting fault ends the run with the
  // step and its usage in the trace.
  let calls: SyncOrAsync<Call[]>
  // The tool-input guardrails' verdicts (none without such guardrails: no array is made).
  const log: Screened[] | undefined = slice.guardrails.toolInput.length ? [] : undefined
  try {
    calls = reviewCalls(asked, base.i, state, slice, log)
  } catch {
    return unreviewed(acted, asked)
  }
  // Callbacks only when review waited: a step whose review asked nobody makes no closure.
  if (isPromise(calls)) {
    return calls.then(
      (c) => reviewed(acted, c, log),
      () => unreviewed(acted, asked),
    )
  }
  return reviewed(acted, calls, log)
}

/** The think transition that recorded `base` (its event names the step and its tokens). */
function thoughtOf(s: RunState, base: Step, bytes: number, tool: string | null): Transition {
  return transitionTo(s, 'think', {
    step: base.i,
    tool,
    promptTokens: base.promptTokens,
    completionTokens: base.completionTokens,
    stopReason: s.result?.stopReason ?? null,
    bytes,
  })
}

/** A reply with calls, read: what recording its step needs once the calls are reviewed. */
interface Acted {
  state: RunState
  reply: Reply
  base: StepBase
  thought: string
  bytes: number
  slice: Slice
  /** The calls' tool names, as the think event names them. */
  tool: string
}

/** The state with the reply's action step recorded, in `phase`. */
function acting(a: Acted, calls: Call[], phase: Phase): RunState {
  return withStep(a.state, a.reply, stepOf(a.base, 'action', a.thought, calls), phase)
}

/** The step recorded with its calls reviewed: done at once when review answered all of them. */
function reviewed(a: Acted, calls: Call[], log?: Screened[]): Transition {
  let next = acting(a, calls, phaseAfterReview(calls))
  if (log?.length) {
    next = withScreened(next, log)
    const tripped = trippedOf(log)
    if (tripped) {
      const ended = stopTripped(next, tripped, a.slice)
      return thoughtOf(ended, a.base, a.bytes, a.tool)
    }
  }
  const done = allHaveStatus(calls, 'done')
  return thoughtOf(done ? completeStep(next, a.slice) : next, a.base, a.bytes, a.tool)
}

/** The step recorded with its calls pending: the next transition reviews them again. */
function unreviewed(a: Acted, calls: Call[]): Transition {
  return thoughtOf(acting(a, calls, 'act'), a.base, a.bytes, a.tool)
}

/** An unusable reply: a `[FormatError]` step the model sees, and the streak it counts toward. */
function formatError(
  state: RunState,
  reply: Reply,
  base: StepBase,
  thought: string,
  problem: string,
  slice: Slice,
  outputInvalid = false,
): RunState {
  const formatErrorText =
    state.protocol === 'text'
      ? `[FormatError] ${problem}\n${textFormatOf(state.agent)}`
      : state.agent.output
        ? `[FormatError] ${problem} Call one of the tools, or call ${FINAL_ANSWER_TOOL} with an "answer" that matches its schema.`
        : `[FormatError] ${problem} Call one of the tools, or reply with the final answer as plain text.`
  // An unusable reply is a failed step: it extends the one streak failed tool steps extend.
  const { streak, exhausted } = errorStreak(state, true)
  const step = stepOf(base, 'format_error', thought, [], null, formatErrorText)
  const recorded = withStep(state, reply, step)
  recorded.consecutiveErrors = streak
  if (!exhausted) return recorded
  if (outputInvalid) {
    const why = `${streak} failed steps in a row; last: an answer that failed the output schema (${problem})`
    return stop(recorded, 'output_invalid', slice, why)
  }
  const why = `${streak} failed steps in a row; last: an unusable reply (${problem})`
  return stop(recorded, 'unparsable_exhausted', slice, why)
}

/** What recording any reply changes in the run, besides its step. */
interface Reply {
  model: string
  usage: Usage
}

/**
 * `state` with the reply recorded: its step appended, its usage counted, the model call's record
 * closed, in one copy (a new state nobody else holds yet, so it is filled in place).
 */
function withStep(state: RunState, reply: Reply, step: Step, phase = state.phase): RunState {
  const next = copyState(state)
  // A copy and a push: `concat` of a one-step array cost twice as much (it checks every
  // argument for spreadability). A run's first step goes into a literal of this line's own, not
  // a copy of the state's empty array: V8 makes an empty literal for small integers, and pushing
  // a step into a copy of one deoptimized the step path once per process; this literal learns to
  // hold objects (docs/development.md#kernel-performance).
  const steps = state.steps.length ? state.steps.slice() : []
  steps.push(step)
  next.steps = steps
  next.modelCall = null
  next.model = reply.model
  next.usage = reply.usage
  next.phase = phase
  return next
}

/** The step this think started (`base`), completed with what the reply said. */
function stepOf(
  base: StepBase,
  kind: Step['kind'],
  thought: string,
  calls: Call[],
  answer: string | null = null,
  formatErrorText: string | null = null,
): Step {
  base.kind = kind
  base.thought = thought
  base.calls = calls
  base.answer = answer
  base.formatError = formatErrorText
  return base
}

/** A placeholder until the reply is read (never recorded: `stepOf` replaces it). */
const NO_CALLS: Call[] = []
