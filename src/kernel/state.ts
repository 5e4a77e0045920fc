import * as z from 'zod/mini'
import { BudgetSchema, STOP_REASONS } from './budget'
import { CONFIRM_MODES } from './confirm'

/**
 * The persisted shape of a run (DESIGN §3). Plain JSON; `v` is bumped on any incompatible change
 * and `parseRunState` migrates older versions.
 */
export const RUN_STATE_VERSION = 1

export const CALL_STATUSES = [
  'pending', // recorded from the model, not yet looked at
  'ready', // may run (read-only, or the policy decides inside dispatch)
  'awaiting_approval', // waits for a person
  'approved',
  'denied',
  'started', // a side effect is about to run; persisted before it runs
  'done',
] as const

export const OBSERVATION_KINDS = [
  'ok',
  'tool_error',
  'dry_run',
  'loop_guard',
  'denied',
  'outcome_unknown',
] as const

export const ApprovalSchema = z.object({
  /** SHA-256 of the canonical `{ name, args }`: a decision binds to these exact arguments. */
  hash: z.string(),
  requestedAt: z.number(),
  expiresAt: z.number(),
  decision: z.optional(z.enum(['approved', 'denied'])),
  decidedBy: z.optional(z.string()),
  decidedAt: z.optional(z.number()),
  /** `expired`, `cancelled`, or the decider's words. */
  reason: z.optional(z.string()),
})
export type Approval = z.infer<typeof ApprovalSchema>

export const CallSchema = z.object({
  id: z.string(),
  name: z.string(),
  args: z.record(z.string(), z.unknown()),
  /** Native protocol: the argument string exactly as the model sent it. */
  rawArgs: z.optional(z.string()),
  /** Why the argument text could not be used (dispatch reports it). */
  argsError: z.optional(z.string()),
  status: z.enum(CALL_STATUSES),
  approval: z.optional(ApprovalSchema),
  observation: z.optional(z.string()),
  kind: z.optional(z.enum(OBSERVATION_KINDS)),
  /** Characters of the observation before truncation. */
  originalSize: z.optional(z.number()),
  /** Estimated tokens of the observation, counted once when it is recorded. */
  tokens: z.optional(z.number()),
  truncated: z.optional(z.boolean()),
  handle: z.optional(z.string()),
  ms: z.optional(z.number()),
  /** Times a side effect was started (more than 1 only for idempotent tools after a crash). */
  attempts: z.optional(z.number()),
})
export type Call = z.infer<typeof CallSchema>

export const StepSchema = z.object({
  i: z.number(),
  kind: z.enum(['action', 'finish', 'format_error']),
  thought: z.string(),
  /** The model's text as sent (text protocol: replayed as the assistant message). */
  text: z.optional(z.string()),
  calls: z.array(CallSchema),
  answer: z.optional(z.string()),
  /** For `format_error`: the observation shown to the model. */
  formatError: z.optional(z.string()),
  finishReason: z.string(),
  promptTokens: z.number(),
  completionTokens: z.number(),
  /** True when the provider reported no usage and the kernel estimated it. */
  estimated: z.boolean(),
  costUsd: z.optional(z.number()),
  /** Model call time plus tool time of this step. */
  ms: z.number(),
  modelMs: z.number(),
  at: z.number(),
})
export type Step = z.infer<typeof StepSchema>

export const UsageSchema = z.object({
  promptTokens: z.number(),
  completionTokens: z.number(),
  /** True when any step's usage was estimated. */
  estimated: z.boolean(),
  costUsd: z.optional(z.number()),
  modelCalls: z.number(),
})
export type Usage = z.infer<typeof UsageSchema>

export const PolicySchema = z.object({
  mode: z.enum(CONFIRM_MODES),
  tools: z.optional(z.array(z.string())),
})

export const RunStateSchema = z.object({
  v: z.literal(RUN_STATE_VERSION),
  id: z.string(),
  task: z.string(),
  protocol: z.enum(['text', 'native']),
  /** `auto` may fall back from native to text when the provider rejects tools. */
  protocolSetting: z.enum(['auto', 'text', 'native']),
  tools: z.array(z.string()),
  budget: BudgetSchema,
  policy: PolicySchema,
  phase: z.enum(['think', 'act', 'await_approval', 'done']),
  steps: z.array(StepSchema),
  usage: UsageSchema,
  activeMs: z.number(),
  consecutiveErrors: z.number(),
  consecutiveFormatErrors: z.number(),
  cancelRequested: z.boolean(),
  /** Who cancelled and why, for the trace (`cancelled by api:alice: wrong incident`). */
  cancelReason: z.optional(z.string()),
  createdAt: z.number(),
  model: z.optional(z.string()),
  result: z.optional(
    z.object({
      ok: z.boolean(),
      answer: z.string(),
      stopReason: z.enum(STOP_REASONS),
      error: z.optional(z.string()),
      finishedAt: z.number(),
    }),
  ),
})
export type RunState = z.infer<typeof RunStateSchema>
export type Phase = RunState['phase']

/**
 * A copy of `call` with `changes` applied (an undefined change keeps the call's value), built as
 * one literal in schema order. Not a spread or `Object.assign`: on V8 those cost 10 to 50 times
 * more when keys are added, and a call is copied three times a step (npm run bench).
 */
export function updateCall(call: Call, changes: Partial<Call>): Call {
  const next: Call = {
    id: call.id,
    name: call.name,
    args: changes.args ?? call.args,
    status: changes.status ?? call.status,
  }
  const rawArgs = changes.rawArgs ?? call.rawArgs
  if (rawArgs !== undefined) next.rawArgs = rawArgs
  const argsError = changes.argsError ?? call.argsError
  if (argsError !== undefined) next.argsError = argsError
  const approval = changes.approval ?? call.approval
  if (approval !== undefined) next.approval = approval
  const observation = changes.observation ?? call.observation
  if (observation !== undefined) next.observation = observation
  const kind = changes.kind ?? call.kind
  if (kind !== undefined) next.kind = kind
  const originalSize = changes.originalSize ?? call.originalSize
  if (originalSize !== undefined) next.originalSize = originalSize
  const tokens = changes.tokens ?? call.tokens
  if (tokens !== undefined) next.tokens = tokens
  const truncated = changes.truncated ?? call.truncated
  if (truncated !== undefined) next.truncated = truncated
  const handle = changes.handle ?? call.handle
  if (handle !== undefined) next.handle = handle
  const ms = changes.ms ?? call.ms
  if (ms !== undefined) next.ms = ms
  const attempts = changes.attempts ?? call.attempts
  if (attempts !== undefined) next.attempts = attempts
  return next
}

/**
 * A shallow copy of `state` built as one literal in schema order, for a transition that adds
 * keys (a result, a model name): on V8 a spread that adds keys costs about 1 µs a key.
 */
export function copyState(state: RunState): RunState {
  const next: RunState = {
    v: state.v,
    id: state.id,
    task: state.task,
    protocol: state.protocol,
    protocolSetting: state.protocolSetting,
    tools: state.tools,
    budget: state.budget,
    policy: state.policy,
    phase: state.phase,
    steps: state.steps,
    usage: state.usage,
    activeMs: state.activeMs,
    consecutiveErrors: state.consecutiveErrors,
    consecutiveFormatErrors: state.consecutiveFormatErrors,
    cancelRequested: state.cancelRequested,
    createdAt: state.createdAt,
  }
  if (state.cancelReason !== undefined) next.cancelReason = state.cancelReason
  if (state.model !== undefined) next.model = state.model
  if (state.result !== undefined) next.result = state.result
  return next
}

/** Validates persisted or received state; the error lists each problem. */
export function parseRunState(
  value: unknown,
): { ok: true; state: RunState } | { ok: false; error: string } {
  const parsed = z.safeParse(RunStateSchema, value)
  if (parsed.success) return { ok: true, state: parsed.data }
  const problems = parsed.error.issues
    .slice(0, 10)
    .map((i) => `${i.path.join('.') || '(root)'}: ${i.code}`)
  return { ok: false, error: `invalid run state: ${problems.join('; ')}` }
}
