import * as z from 'zod/mini'
import type { ModelUsage } from '../model'

/**
 * Guardrails (docs/guardrails.md): checks beside the agent on what comes in (the task), what a
 * tool is asked (a call's arguments), what a tool gives back (an observation) and what goes out
 * (the final answer). The kernel owns where they run; a guardrail only judges a value.
 */

/** Where a guardrail runs. */
export const GUARDRAIL_POINTS = ['input', 'toolInput', 'toolOutput', 'output'] as const
export type GuardrailPoint = (typeof GUARDRAIL_POINTS)[number]

/** What a guardrail decided, as the trace records it. */
export const GUARDRAIL_VERDICTS = ['pass', 'tripwire', 'rewrite'] as const

/**
 * A guardrail's answer: let the value through, stop the run (with why), or let a replacement
 * through instead (redacted text, framed text, cleaned arguments).
 */
export type GuardrailVerdict =
  | { verdict: 'pass' }
  | { verdict: 'tripwire'; reason: string }
  | { verdict: 'rewrite'; value: unknown; reason?: string }

/** What a guardrail is told besides the value. */
export interface GuardrailContext {
  runId: string
  agent: string
  point: GuardrailPoint
  /** The step the value belongs to; null for the task. */
  step: number | null
  /** The tool of a call (toolInput, toolOutput); null elsewhere. */
  tool: string | null
  callId: string | null
  /** Aborted when the guardrail's time is up or the run is cancelled. */
  signal: AbortSignal
  /** A model-judged check reports what its model call used: it counts against the run's budget. */
  charge(usage: ModelUsage): void
}

/** One check. `check` may answer at once or with a promise. */
export interface Guardrail {
  /** Names it in the trace, events and a tripwire's reason. */
  name: string
  check(value: unknown, ctx: GuardrailContext): GuardrailVerdict | Promise<GuardrailVerdict>
  /** A check that throws, times out or answers no verdict: a tripwire (default) or a pass. */
  onError?: 'trip' | 'pass'
  /** How long an asynchronous check may take; default DEFAULT_GUARDRAIL_TIMEOUT_MS. */
  timeoutMs?: number
}

/** The guardrails of a run, by point, each list run in order. */
export type RunGuardrails = { readonly [P in GuardrailPoint]: readonly Guardrail[] }

export const DEFAULT_GUARDRAIL_TIMEOUT_MS = 15_000

export const NO_GUARDRAILS: RunGuardrails = Object.freeze({
  input: [],
  toolInput: [],
  toolOutput: [],
  output: [],
})

/** `partial` with every point present. */
export function runGuardrails(partial: Partial<RunGuardrails> | undefined): RunGuardrails {
  if (!partial) return NO_GUARDRAILS
  return {
    input: partial.input ?? [],
    toolInput: partial.toolInput ?? [],
    toolOutput: partial.toolOutput ?? [],
    output: partial.output ?? [],
  }
}

/** One verdict as the run keeps it (persisted with the state, shown in the trace). */
export const GuardrailRecordSchema = z.object({
  guardrail: z.string(),
  point: z.enum(GUARDRAIL_POINTS),
  verdict: z.enum(GUARDRAIL_VERDICTS),
  /** A tripwire's or a rewrite's reason; a failed check's error for one it tripped. */
  reason: z.nullable(z.string()),
  /** What went wrong when the check threw, timed out or gave no valid verdict. */
  error: z.nullable(z.string()),
  step: z.nullable(z.number()),
  tool: z.nullable(z.string()),
  callId: z.nullable(z.string()),
  ms: z.number(),
  at: z.number(),
  /** A model-judged check: the tokens its model call used (null: no model call). */
  promptTokens: z.nullable(z.number()),
  completionTokens: z.nullable(z.number()),
  costUsd: z.nullable(z.number()),
})
export type GuardrailRecord = z.infer<typeof GuardrailRecordSchema>
