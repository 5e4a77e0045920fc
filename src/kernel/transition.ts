import type { StopReason } from './budget'
import type { ConfirmHook } from './confirm'
import { CallIds } from './call-ids'
import { RenderCache } from './context'
import type { Model, Protocol } from './model'
import type { ToolRegistry } from './registry'
import { callsFailed, errorStreak } from './error-streak'
import { copyState, updateState } from './update-state'
import { type Phase, type RunState } from './state'
import type { AgentPolicy, ObservationStore } from './tool'
import type { ChildRuns } from './delegation'
import { runGuardrails, type RunGuardrails } from './guardrails/guardrail'

/** What the kernel needs from outside to advance a run: it does no I/O of its own. */
export interface Deps {
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
  pricing?: Pricing
  /**
   * Takes secrets out of what a tool or the model gives, before the run records it (and so
   * before it is stored, streamed, logged or sent to the model again): observations, tool
   * errors, replies, model errors. Without it nothing is redacted.
   */
  redact?: (text: string) => string
  /**
   * Told the text of the reply to step `step` as a streaming model writes it (a live view only:
   * nothing of it is recorded until the whole reply is in). `attempt` names the model call of
   * that step it belongs to (`ModelCall.attempt`): a call made again after one whose answer was
   * lost has a higher one, so a watcher can drop the lost call's text.
   */
  onModelText?: (step: number, protocol: Protocol, delta: string, attempt: number) => void
  /**
   * Where delegated calls start their child runs and learn their ends (a run store). Without
   * it a delegated call is a `[ToolError]`.
   */
  children?: ChildRuns
  /**
   * The run's guardrails by point (docs/guardrails.md): the kernel runs them on the task, each
   * call's arguments, each observation and the final answer.
   */
  guardrails?: Partial<RunGuardrails>
  /**
   * The agent's policy (docs/human-in-the-loop.md#policies-as-code): asked about every call at
   * review, beside the tool's own; the stricter applies.
   */
  policy?: AgentPolicy
}

export interface Pricing {
  promptPer1K: number
  completionPer1K: number
  /** For prompt tokens served from the provider's cache; unset: they cost `promptPer1K`. */
  cachedPromptPer1K?: number
}

/**
 * What the transitions of one slice (one Worker invocation, or one `react()` run) share: the
 * deps with defaults applied, the rendered prompt, and the facts that only hold inside this
 * process. A `started` record read back from storage is not in `startedCalls`: that is how a
 * resumed run knows the process that wrote it died before recording the result.
 */
export class Slice {
  readonly registry: ToolRegistry
  readonly now: () => number
  /** `deps.redact`, or nothing to redact. */
  readonly redact: (text: string) => string
  readonly render = new RenderCache()
  /** Ids of calls whose `started` record this slice wrote (each runs here, at most once). */
  readonly startedCalls = new Set<string>()
  /** Steps whose model-call record this slice wrote (see `RunState.modelCall`). */
  readonly startedModelCalls = new Set<number>()
  /** The run's call ids, for naming new calls uniquely. */
  readonly callIds = new CallIds()
  /** `deps.guardrails` with every point present. */
  readonly guardrails: RunGuardrails

  constructor(readonly deps: Deps) {
    this.registry = deps.registry.forRun()
    this.now = deps.now ?? Date.now
    this.redact = deps.redact ?? unchanged
    this.guardrails = runGuardrails(deps.guardrails)
  }
}

const unchanged = (text: string) => text

/** Every kind of transition, as events and logs name them. */
export type Action =
  /** Budgets checked and the model call's record written, before the call (think phase). */
  | 'model_call_started'
  /** The model answered: its step recorded and the step's calls reviewed. */
  | 'think'
  /** The provider refused native tools: an `auto` run continues with the text protocol. */
  | 'fallback'
  /** Calls of a step saved before review (an older state) reviewed on their own. */
  | 'review'
  /** A side effect's `started` record, persisted before it runs. */
  | 'start_call'
  /** One call ran (or was answered without running) and its observation recorded. */
  | 'run_call'
  /** Several read-only calls of the step ran at the same time; all their observations recorded. */
  | 'run_calls'
  /** Child runs of delegated calls created (or found: creating one is idempotent). */
  | 'start_child'
  /** A child run ended: back to act, which records its answer. */
  | 'child_done'
  /** Every call of the step answered: the error streak updated, back to think. */
  | 'complete_step'
  /** The step waits for a person's decision. */
  | 'await'
  /** Pending approvals expired (and count as denied). */
  | 'expire'
  /** The task's input guardrails ran (before the first model call). */
  | 'guardrail'
  /** The run ended (see `stopReason`). */
  | 'stop'
  /** Nothing to do: the run has ended. */
  | 'noop'

/** One transition, described for logs, events and slice accounting. */
export interface TransitionEvent {
  runId: string
  phase: Phase
  action: Action
  step: number | null
  tool: string | null
  callId: string | null
  ms: number
  promptTokens: number | null
  completionTokens: number | null
  stopReason: StopReason | null
  /** Approximate bytes built, parsed and serialized (the CPU proxy of an edge slice). */
  bytes: number
}

/**
 * What may follow a transition, decided by the phase that made it (so neither the slice loop nor
 * the RunStore reads it from action names or from whether the state changed).
 */
export type Follows =
  /** Any transition, in this slice or a later one. */
  | 'next'
  /** The model call's record was written: only this slice may make the call, next. */
  | 'model_call'
  /**
   * A side effect's `started` record was written: only this slice may run it, next, and a cancel
   * waits for its result.
   */
  | 'side_effect'
  /**
   * Nothing until a person decides or an approval expires (or ever, for a run that has ended):
   * the state is unchanged, and the slice ends.
   */
  | 'wait'

/**
 * One transition: the next state, its event (whose `runId`, `phase` and `ms` `transition` fills
 * in once the phase has returned: one object per transition, not one per layer) and what may
 * follow it. A phase returns one and `transition` completes it.
 */
export interface Transition {
  state: RunState
  event: TransitionEvent
  follows: Follows
}

/** A transition of `action` to `state`, every field of its event present. */
export function transitionTo(
  state: RunState,
  action: Action,
  fields: Partial<Omit<TransitionEvent, 'runId' | 'phase' | 'ms'>> = {},
  follows: Follows = 'next',
): Transition {
  return { state, event: happened(action, fields), follows }
}

/** An event of `action`, every field present (`runId`, `phase`, `ms` until `transition` sets them). */
export function happened(
  action: Action,
  fields: Partial<Omit<TransitionEvent, 'runId' | 'phase' | 'ms'>> = {},
): TransitionEvent {
  return {
    runId: '',
    phase: 'think',
    action,
    step: fields.step ?? null,
    tool: fields.tool ?? null,
    callId: fields.callId ?? null,
    ms: 0,
    promptTokens: fields.promptTokens ?? null,
    completionTokens: fields.completionTokens ?? null,
    stopReason: fields.stopReason ?? null,
    bytes: fields.bytes ?? 0,
  }
}

/** Ends the run. Failure is explicit: an answer only with `finish`, never a half answer. */
export function stop(
  state: RunState,
  reason: StopReason,
  slice: Slice,
  error: string | null = null,
  answer = '',
  output: unknown = null,
): RunState {
  const ok = reason === 'finish'
  return updateState(state, {
    phase: 'done',
    modelCall: null,
    result: {
      ok,
      answer: ok ? answer : '',
      stopReason: reason,
      error: error === null ? null : slice.redact(error),
      output: ok ? output : null,
      finishedAt: slice.now(),
    },
  })
}

/** `stop` as a transition of its own. */
export function stopped(
  state: RunState,
  reason: StopReason,
  slice: Slice,
  error: string | null = null,
): Transition {
  return transitionTo(stop(state, reason, slice, error), 'stop', { stopReason: reason })
}

/**
 * Every call of the last step has its observation: update the error streak (failed steps of
 * every kind count; a success resets it), then think again or stop when the streak is spent.
 * `steps` are the run's steps with that last step recorded (by default `state`'s), so the
 * caller that records it needs no copy of its own.
 */
export function completeStep(state: RunState, slice: Slice, steps = state.steps): RunState {
  const current = steps[steps.length - 1]!
  const { streak, exhausted } = errorStreak(state, callsFailed(current.calls))
  const next = copyState(state)
  next.steps = steps
  next.consecutiveErrors = streak
  next.phase = 'think'

  if (!exhausted) return next
  const last = current.calls.at(-1)?.observation ?? ''
  const why = `${streak} failed steps in a row; last: ${last.slice(0, 300)}`
  return stop(next, 'tool_error_exhausted', slice, why)
}

/** What a cancelled run says about why: the recorded reason, or the abort's. */
export function cancelMessage(state: RunState, slice: Slice): string {
  if (state.cancelReason) return state.cancelReason
  const reason: unknown = slice.deps.signal?.reason
  if (reason instanceof Error && reason.message) return reason.message
  return 'the run was cancelled'
}
