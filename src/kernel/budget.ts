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
  // A guardrail tripped (docs/guardrails.md): the task, a call, an observation or the answer.
  'guardrail',
  // The service could not advance the run (storage failure, a tool set no longer buildable).
  'internal_error',
] as const
export type StopReason = (typeof STOP_REASONS)[number]

/** The bounds a budget value must keep (checked by `BudgetSchema`). */
interface Bounds {
  /** The least value allowed. */
  min?: number
  /** Above zero (zero itself is not allowed). */
  positive?: true
  max?: number
  integer?: true
}

/**
 * The deployment's setting for a budget key. Its bounds are the key's unless it names its own (a
 * setting's `min` is always inclusive). `role` says what the value does to a run's budget:
 * - `maximum`: a run may ask for at most it, and one that asks nothing gets the key's default or
 *   the setting, whichever is lower;
 * - `value`: a run that asks nothing gets the setting itself, and may ask for at most it.
 */
interface BudgetSetting extends Omit<Bounds, 'positive'> {
  name: string
  /** The setting's value when it is unset; none: unset means no limit. */
  fallback?: number
  role: 'maximum' | 'value'
}

/** One budget key: its bounds, its default, and the server setting that limits it. */
interface BudgetKey extends Bounds {
  /** What a run gets when nobody sets the key. None: the key stays unset in a run's budget. */
  default?: number
  /** What the kernel does when the key is unset (a key without `default`); none: no limit. */
  unset?: number
  setting?: BudgetSetting
}

/**
 * Every budget key, once: `BudgetSchema`, `DEFAULT_BUDGET`, the service's settings and its maxima
 * and defaults are all made from this table (src/config/budget.ts).
 */
export const BUDGET_KEYS = {
  /** Model calls (steps) at most. */
  maxSteps: {
    min: 1,
    max: 1000,
    integer: true,
    default: 12,
    setting: { name: 'MAX_STEPS', fallback: 50, role: 'maximum' },
  },
  /** Prompt tokens summed over every model call. */
  maxPromptTokens: {
    min: 1,
    integer: true,
    default: 200_000,
    setting: { name: 'MAX_PROMPT_TOKENS', max: 1e8, fallback: 500_000, role: 'maximum' },
  },
  /** Active wall time; time spent waiting for a human approval is not charged. */
  maxSeconds: {
    positive: true,
    max: 86_400,
    default: 300,
    setting: { name: 'MAX_SECONDS', min: 1, integer: true, fallback: 900, role: 'maximum' },
  },
  /** Consecutive failed steps (all calls errored, or unparsable output) before giving up. */
  maxConsecutiveErrors: { min: 1, max: 100, integer: true, default: 3 },
  /** Observations above this are truncated (and kept whole by handle). */
  // At most 20 000: a step's row holds its observations and must stay well under 2 MB.
  maxObservationTokens: { min: 50, max: 20_000, integer: true, default: 2_000 },
  /** The loop guard looks this many steps back for an identical call. */
  loopGuardWindow: { min: 0, max: 50, integer: true, default: 3 },
  /**
   * The largest request the model is sent, in estimated tokens: past it the oldest observations
   * are elided from the request (not the trace), never the latest step's. Unset: no cap.
   */
  maxContextTokens: {
    min: 1_000,
    integer: true,
    setting: { name: 'MAX_CONTEXT_TOKENS', fallback: 32_000, role: 'value' },
  },
  /**
   * A follow-up run (`continue`) starts with the earlier runs of its conversation as compact
   * turns in at most this many estimated tokens: the oldest go first. The least leaves room for
   * the header and the stub of dropped turns.
   */
  maxHistoryTokens: {
    min: 200,
    max: 100_000,
    integer: true,
    unset: 4_000,
    setting: { name: 'MAX_HISTORY_TOKENS', fallback: 4_000, role: 'value' },
  },
  /** Read-only calls of one step run at the same time, at most this many at once. */
  maxParallelCalls: {
    min: 1,
    max: 64,
    integer: true,
    unset: 8,
    setting: { name: 'MAX_PARALLEL_CALLS', fallback: 8, role: 'value' },
  },
  /** Spend limit in USD; needs prices configured for the model. */
  maxCostUsd: { positive: true, setting: { name: 'MAX_COST_USD', min: 0, role: 'value' } },
  /** How long a pending approval waits for a person before it counts as denied. */
  approvalTtlSeconds: {
    min: 1,
    max: 30 * 86_400,
    integer: true,
    default: 24 * 3600,
    setting: { name: 'APPROVAL_TTL_SECONDS', fallback: 86_400, role: 'value' },
  },
} as const satisfies Record<string, BudgetKey>

export type BudgetKeyName = keyof typeof BUDGET_KEYS

/** The names of the settings that limit budget keys (MAX_STEPS, …). */
export type BudgetSettingName = {
  [K in BudgetKeyName]: (typeof BUDGET_KEYS)[K] extends { setting: { name: infer N } } ? N : never
}[BudgetKeyName]

/** The table's rows, typed as rows (the literal types of `BUDGET_KEYS` are for the schema's). */
export const BUDGET_ROWS = Object.entries(BUDGET_KEYS) as [BudgetKeyName, BudgetKey][]

/** The history limit's bounds and what an unset one means (`maxHistoryTokens`). */
export const MIN_HISTORY_TOKENS: number = BUDGET_KEYS.maxHistoryTokens.min
export const MAX_HISTORY_TOKENS: number = BUDGET_KEYS.maxHistoryTokens.max
export const DEFAULT_HISTORY_TOKENS: number = BUDGET_KEYS.maxHistoryTokens.unset

/** Read-only calls run at once when a run's budget does not say (`maxParallelCalls`). */
export const DEFAULT_MAX_PARALLEL_CALLS: number = BUDGET_KEYS.maxParallelCalls.unset

/** A number within `bounds`, with the checks in the order their problems are reported. */
function boundedNumber(bounds: Bounds): z.ZodMiniNumber<number> {
  const checks: z.core.$ZodCheck<number>[] = []
  if (bounds.integer) checks.push(z.int())
  if (bounds.positive) checks.push(z.positive())
  if (bounds.min !== undefined) checks.push(z.minimum(bounds.min))
  if (bounds.max !== undefined) checks.push(z.maximum(bounds.max))
  return z.number().check(...checks)
}

type Keys = typeof BUDGET_KEYS
type BudgetShape = {
  [K in BudgetKeyName]: Keys[K] extends { default: number }
    ? z.ZodMiniNumber<number>
    : z.ZodMiniOptional<z.ZodMiniNumber<number>>
}

export const BudgetSchema = z.object(
  Object.fromEntries(
    BUDGET_ROWS.map(([key, rule]) => {
      const value = boundedNumber(rule)
      return [key, rule.default === undefined ? z.optional(value) : value]
    }),
  ) as BudgetShape,
)
export type Budget = z.infer<typeof BudgetSchema>

/**
 * What a caller may set of a run's budget: the HTTP API's `budget` field and `react()`'s
 * `budget` option, checked by this one schema (unknown fields are errors, not ignored).
 */
export const BudgetOverrides = z.partial(z.strictObject(BudgetSchema.def.shape))
export type BudgetOverrides = z.infer<typeof BudgetOverrides>

/** A run's budget when nobody sets anything: each key's default (the others stay unset). */
export const DEFAULT_BUDGET = Object.fromEntries(
  BUDGET_ROWS.flatMap(([key, rule]) => (rule.default === undefined ? [] : [[key, rule.default]])),
) as Budget

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
