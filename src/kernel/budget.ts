import * as z from 'zod/mini'

/** Why a run ended. `finish` is the only success (docs/architecture.md#budgets-and-edge-limits). */
export const STOP_REASONS = [
  'finish',
  'max_steps',
  'token_budget',
  'cost_budget',
  'timeout',
  'unparsable_exhausted',
  'tool_error_exhausted',
  'cancelled',
  'model_error',
  'content_filter',
  // The final answer did not match the run's output schema, in too many steps in a row.
  'output_invalid',
  // The service could not advance the run (storage failure, a tool set no longer buildable).
  'internal_error',
] as const
export type StopReason = (typeof STOP_REASONS)[number]

/** The history limit's bounds: room for the header and the stub of dropped turns, and a cap. */
export const MIN_HISTORY_TOKENS = 200
export const MAX_HISTORY_TOKENS = 100_000
export const DEFAULT_HISTORY_TOKENS = 4_000

export const BudgetSchema = z.object({
  /** Model calls (steps) at most. */
  maxSteps: z.number().check(z.int(), z.minimum(1), z.maximum(1000)),
  /** Prompt tokens summed over every model call. */
  maxPromptTokens: z.number().check(z.int(), z.minimum(1)),
  /** Active wall time; time spent waiting for a human approval is not charged. */
  maxSeconds: z.number().check(z.positive(), z.maximum(86_400)),
  /** Consecutive failed steps (all calls errored, or unparsable output) before giving up. */
  maxConsecutiveErrors: z.number().check(z.int(), z.minimum(1), z.maximum(100)),
  /** Observations above this are truncated (and kept whole by handle). */
  // At most 20 000: a step's row holds its observations and must stay well under 2 MB.
  maxObservationTokens: z.number().check(z.int(), z.minimum(50), z.maximum(20_000)),
  /** The loop guard looks this many steps back for an identical call. */
  loopGuardWindow: z.number().check(z.int(), z.minimum(0), z.maximum(50)),
  /**
   * The largest request the model is sent, in estimated tokens: past it the oldest observations
   * are elided from the request (not the trace), never the latest step's. Unset: no cap.
   */
  maxContextTokens: z.optional(z.number().check(z.int(), z.minimum(1_000))),
  /**
   * A follow-up run (`continue`) starts with the earlier runs of its conversation as compact
   * turns in at most this many estimated tokens: the oldest go first. Unset: 4000.
   */
  maxHistoryTokens: z.optional(
    z.number().check(z.int(), z.minimum(MIN_HISTORY_TOKENS), z.maximum(MAX_HISTORY_TOKENS)),
  ),
  /** Read-only calls of one step run at the same time, at most this many at once. Default 8. */
  maxParallelCalls: z.optional(z.number().check(z.int(), z.minimum(1), z.maximum(64))),
  /** Spend limit in USD; needs prices configured for the model. */
  maxCostUsd: z.optional(z.number().check(z.positive())),
  /** How long a pending approval waits for a person before it counts as denied. */
  approvalTtlSeconds: z.number().check(z.int(), z.minimum(1), z.maximum(30 * 86_400)),
})
export type Budget = z.infer<typeof BudgetSchema>

/**
 * What a caller may set of a run's budget: the HTTP API's `budget` field and `react()`'s
 * `budget` option, checked by this one schema (unknown fields are errors, not ignored).
 */
export const BudgetOverrides = z.partial(z.strictObject(BudgetSchema.def.shape))
export type BudgetOverrides = z.infer<typeof BudgetOverrides>

export const DEFAULT_BUDGET: Budget = {
  maxSteps: 12,
  maxPromptTokens: 200_000,
  maxSeconds: 300,
  maxConsecutiveErrors: 3,
  maxObservationTokens: 2_000,
  loopGuardWindow: 3,
  approvalTtlSeconds: 24 * 3600,
}

/**
 * What one invocation (one alarm) may do before it checkpoints and continues in a fresh one
 * (docs/architecture.md#budgets-and-edge-limits). CPU time cannot be read inside a deployed Worker, so it is bounded through the
 * bytes the kernel builds, parses and serializes, at a per-byte cost the benchmark measures.
 */
export interface EdgeSlice {
  maxTransitions: number
  maxWallMs: number
  maxBytes: number
}

/** Conservative CPU cost of kernel work per byte (ns), from `npm run bench` with headroom. */
export const CPU_NS_PER_BYTE = 50

/** The slice for a Worker whose `[limits] cpu_ms` is `cpuMs`: half of it, for safety. */
export function sliceForCpuMs(cpuMs: number, overrides: Partial<EdgeSlice> = {}): EdgeSlice {
  return {
    maxTransitions: 64,
    // Alarm handlers may run 15 minutes of wall time; stay well inside it.
    maxWallMs: 5 * 60_000,
    maxBytes: Math.floor(((cpuMs / 2) * 1e6) / CPU_NS_PER_BYTE),
    ...overrides,
  }
}
