import * as z from 'zod/mini'
import { STOP_REASONS } from './budget'
import { conversationView } from './conversation'
import { ConversationViewSchema } from './conversation-schema'
import { GUARDRAIL_POINTS, GuardrailRecordSchema } from './guardrails/guardrail'
import {
  CallSchema,
  PHASES,
  PROTOCOLS,
  StepSchema,
  type Call,
  type RunState,
  type Step,
} from './state'

/**
 * The serializable trace of a run (docs/architecture.md#the-five-disciplines, 3), declared once:
 * `react()` returns it, and the HTTP API's trace (src/api/response-schemas.ts) is derived from
 * these schemas, with its times in ISO 8601.
 */

/**
 * How the trace shows a field of the run's state (kernel/state.ts declares each field once):
 * `present` always there, a stored null shown as '' or 0 (`toRunResult` fills it in); `optional`
 * absent when the state holds null. A schema in place of either replaces the field's type.
 */
type Shown = 'present' | 'optional' | z.core.SomeType

/** A state field's type without the null and the default its stored form allows. */
type Bare<T> =
  T extends z.ZodMiniDefault<infer I> ? Bare<I> : T extends z.ZodMiniNullable<infer I> ? Bare<I> : T

type TraceShape<S extends z.core.$ZodShape, F extends { [K in keyof F]: Shown }> = {
  [K in keyof F]: F[K] extends z.core.SomeType
    ? F[K]
    : K extends keyof S
      ? F[K] extends 'optional'
        ? z.ZodMiniOptional<Bare<S[K]>>
        : Bare<S[K]>
      : never
}

function bare(schema: z.core.$ZodType): z.core.$ZodType {
  const def = schema._zod.def as { type: string; innerType?: z.core.$ZodType }
  return def.type === 'default' || def.type === 'nullable' ? bare(def.innerType!) : schema
}

/** The trace's fields of a state record, in the trace's order (`fields`'), typed from the state. */
function traceFields<S extends z.core.$ZodShape, F extends { [K in keyof F]: Shown }>(
  state: S,
  fields: F & { [K in keyof F]: K extends keyof S ? Shown : z.core.SomeType },
): TraceShape<S, F> {
  const shape: Record<string, z.core.SomeType> = {}
  for (const [key, how] of Object.entries(fields as Record<string, Shown>)) {
    if (typeof how !== 'string') shape[key] = how
    else if (how === 'optional') shape[key] = z.optional(bare(state[key]!))
    else shape[key] = bare(state[key]!)
  }
  return shape as TraceShape<S, F>
}

/**
 * One call in the trace: what was called, with what, and what came back (the state's call
 * without what only the run needs: the raw arguments, token counts, attempts, the child).
 */
export const TraceCallSchema = z.object(
  traceFields(CallSchema.shape, {
    id: 'present',
    name: 'present',
    args: 'present',
    observation: 'present',
    /** Characters before truncation. */
    originalSize: 'present',
    truncated: 'present',
    handle: 'optional',
    ms: 'present',
    status: 'present',
    kind: 'optional',
    approval: 'optional',
    /** What the tool's code policies said, and what applied. */
    policy: 'optional',
    argsError: 'optional',
    /** The call was written as text in a native reply, in this format family. */
    fromText: 'optional',
  }),
)
export type TraceCall = z.infer<typeof TraceCallSchema>

/** One step in the trace: the state's step without its texts, elided steps and start time. */
export const TraceStepSchema = z.object(
  traceFields(StepSchema.shape, {
    i: 'present',
    kind: 'present',
    thought: 'present',
    calls: z.array(TraceCallSchema),
    promptTokens: 'present',
    completionTokens: 'present',
    estimated: 'present',
    costUsd: 'optional',
    /** Prompt tokens the provider served from its cache, when it reported them. */
    cachedPromptTokens: 'optional',
    /** Tokens of old observations elided from this step's request (maxContextTokens). */
    elidedTokens: 'present',
    /** Estimated tokens of the tool specs this step's request offered. */
    toolSpecTokens: 'present',
    lostModelCalls: 'present',
    ms: 'present',
    modelMs: 'present',
    finishReason: 'present',
    formatError: 'optional',
  }),
)
export type TraceStep = z.infer<typeof TraceStepSchema>

export const TraceUsageSchema = z.object({
  promptTokens: z.number(),
  completionTokens: z.number(),
  estimated: z.boolean(),
  costUsd: z.optional(z.number()),
  /** Prompt tokens served from the provider's cache (where it reported them). */
  cachedPromptTokens: z.number(),
  /** Every model call made, including those whose answers were lost to a crash. */
  modelCalls: z.number(),
  lostModelCalls: z.number(),
  /** Estimated prompt tokens of the lost calls (included in `promptTokens`). */
  lostPromptTokens: z.number(),
  activeMs: z.number(),
})
export type TraceUsage = z.infer<typeof TraceUsageSchema>

/** The agent a run started with, and the version of it the run copied (a content hash). */
export const RunAgentSchema = z.object({ name: z.string(), version: z.string() })

/** What a run's own record says of a child: running until the call has its answer. */
export const TRACE_CHILD_STATUSES = ['running', 'succeeded', 'failed'] as const

/** A child run of a delegated call (docs/agents.md#delegation), as its parent's trace names it. */
export const TraceChildSchema = z.object({
  callId: z.string(),
  runId: z.string(),
  agent: z.string(),
  status: z.enum(TRACE_CHILD_STATUSES),
})
export type TraceChild = z.infer<typeof TraceChildSchema>

/** A guardrail's verdict in the trace (docs/guardrails.md#the-trace). */
export const TraceGuardrailSchema = z.omit(GuardrailRecordSchema, { at: true })
export type TraceGuardrail = z.infer<typeof TraceGuardrailSchema>

/** The guardrail that ended a run: which, where (and for a call, which), why. */
export const TrippedGuardrailSchema = z.object({
  name: z.string(),
  point: z.enum(GUARDRAIL_POINTS),
  reason: z.string(),
  tool: z.optional(z.string()),
  callId: z.optional(z.string()),
})
export type TrippedGuardrail = z.infer<typeof TrippedGuardrailSchema>

/** The serializable trace of a run: did it succeed, why it stopped, every step. JSON. */
export const RunResultSchema = z.object({
  id: z.string(),
  ok: z.boolean(),
  /** Empty unless ok: failure is never dressed as a half answer. */
  answer: z.string(),
  /** A run with an output schema that finished: its validated answer (`answer` renders it). */
  output: z.optional(z.unknown()),
  /** Null while the run is still going. */
  stopReason: z.nullable(z.enum(STOP_REASONS)),
  error: z.optional(z.string()),
  phase: z.enum(PHASES),
  protocol: z.enum(PROTOCOLS),
  model: z.optional(z.string()),
  agent: RunAgentSchema,
  /** Where the run stands in its conversation (a run that continues nothing starts its own). */
  conversation: ConversationViewSchema,
  /** A child run: the run that delegated it. */
  parentRunId: z.optional(z.string()),
  /** The child runs its delegated calls started (present only when there are some). */
  children: z.optional(z.array(TraceChildSchema)),
  /** A run a guardrail ended (stopReason `guardrail`): which one, where and why. */
  guardrail: z.optional(TrippedGuardrailSchema),
  /** Every guardrail verdict, in order (present only when a guardrail ran). */
  guardrails: z.optional(z.array(TraceGuardrailSchema)),
  steps: z.array(TraceStepSchema),
  usage: TraceUsageSchema,
})
export type RunResult = z.infer<typeof RunResultSchema>

/**
 * The trace of a run in any phase. Written field by field in the trace's order, an optional field
 * set only when present, rather than spread from `{}` or a one-key object: every run ends here, and
 * the spreads were about a twentieth of a 20-step run's kernel CPU
 * (docs/development.md#kernel-performance).
 */
export function toRunResult(state: RunState): RunResult {
  const r = state.result
  const ok = r?.ok ?? false
  const out: Partial<RunResult> = { id: state.id, ok, answer: r?.ok ? r.answer : '' }
  if (r?.ok && state.agent.output) out.output = r.output
  out.stopReason = r?.stopReason ?? null
  if (r?.error) out.error = r.error
  out.phase = state.phase
  out.protocol = state.protocol
  if (state.model) out.model = state.model
  out.agent = { name: state.agent.name, version: state.agent.version }
  out.conversation = conversationView(state)
  if (state.parent) out.parentRunId = state.parent.runId
  const children = childrenOf(state)
  if (children.length) out.children = children
  if (state.guardrails.length) {
    const tripped = trippedGuardrail(state)
    if (tripped) out.guardrail = tripped
    out.guardrails = state.guardrails.map(({ at: _at, ...record }) => record)
  }
  out.steps = state.steps.map(traceStep)
  out.usage = traceUsage(state)
  return out as RunResult
}

function traceStep(s: Step): TraceStep {
  const out: Partial<TraceStep> = {
    i: s.i,
    kind: s.kind,
    thought: s.thought,
    calls: s.calls.map(traceCall),
    promptTokens: s.promptTokens,
    completionTokens: s.completionTokens,
    estimated: s.estimated,
  }
  if (s.costUsd !== null) out.costUsd = s.costUsd
  if (s.cachedPromptTokens !== null) out.cachedPromptTokens = s.cachedPromptTokens
  out.elidedTokens = s.elidedTokens
  out.toolSpecTokens = s.toolSpecTokens
  out.lostModelCalls = s.lostModelCalls
  out.ms = s.ms
  out.modelMs = s.modelMs
  out.finishReason = s.finishReason
  if (s.formatError) out.formatError = s.formatError
  return out as TraceStep
}

function traceCall(c: Call): TraceCall {
  const out: Partial<TraceCall> = {
    id: c.id,
    name: c.name,
    args: c.args,
    observation: c.observation ?? '',
    originalSize: c.originalSize ?? 0,
    truncated: c.truncated,
  }
  if (c.handle) out.handle = c.handle
  out.ms = c.ms ?? 0
  out.status = c.status
  if (c.kind) out.kind = c.kind
  if (c.approval) out.approval = c.approval
  if (c.policy) out.policy = c.policy
  if (c.argsError) out.argsError = c.argsError
  if (c.fromText) out.fromText = c.fromText
  return out as TraceCall
}

/** The child runs of a run's delegated calls, with what the run knows of their state. */
export function childrenOf(state: RunState): TraceChild[] {
  const children: TraceChild[] = []
  // Index loops, as on the step path: every run's trace runs this (cold: no iterators).
  const { steps } = state
  for (let s = 0; s < steps.length; s++) {
    const { calls } = steps[s]!
    for (let k = 0; k < calls.length; k++) {
      const c = calls[k]!
      if (!c.child) continue
      const status = c.status !== 'done' ? 'running' : c.kind === 'ok' ? 'succeeded' : 'failed'
      children.push({ callId: c.id, runId: c.child.runId, agent: c.child.agent, status })
    }
  }
  return children
}

/** The tripwire that ended the run, if one did. */
export function trippedGuardrail(state: RunState): TrippedGuardrail | null {
  if (state.result?.stopReason !== 'guardrail') return null
  const r = state.guardrails.findLast((g) => g.verdict === 'tripwire')
  if (!r) return null
  return {
    name: r.guardrail,
    point: r.point,
    reason: r.reason ?? '',
    ...(r.tool ? { tool: r.tool } : {}),
    ...(r.callId ? { callId: r.callId } : {}),
  }
}

/** What a run has used so far, as the trace and the run_finished event report it. */
export function traceUsage(state: RunState): TraceUsage {
  const u = state.usage
  // Field by field in the trace's order, as toRunResult: a spread of `{}` here was 2% of a
  // 20-step run's warm kernel CPU (docs/development.md#kernel-performance).
  const out: Partial<TraceUsage> = {
    promptTokens: u.promptTokens,
    completionTokens: u.completionTokens,
    estimated: u.estimated,
  }
  if (u.costUsd !== null) out.costUsd = u.costUsd
  out.cachedPromptTokens = u.cachedPromptTokens
  out.modelCalls = u.modelCalls
  out.lostModelCalls = u.lostModelCalls
  out.lostPromptTokens = u.lostPromptTokens
  out.activeMs = state.activeMs
  return out as TraceUsage
}
