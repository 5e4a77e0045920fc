import type { StopReason } from './budget'
import type { ConfirmHook } from './confirm'
import type { RenderCache } from './context'
import type { Model } from './model'
import type { ToolRegistry } from './registry'
import type { RunState } from './state'
import type { ObservationStore } from './tool'

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

/**
 * Deps with defaults applied (the registry includes `read_observation`), plus what the kernel
 * keeps between transitions that use the same deps object.
 */
export type Deps = AdvanceDeps & { now: () => number; render: RenderCache }

/** What one transition returns before `transition` adds run id, phase and time. */
export type Result = { state: RunState; event: Omit<TransitionEvent, 'runId' | 'phase' | 'ms'> }
