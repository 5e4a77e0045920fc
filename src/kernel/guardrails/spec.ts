import type { Guardrail, GuardrailPoint } from './guardrail'

/**
 * How an agent's definition names its guardrails (docs/guardrails.md#in-an-agent): a function of
 * its own, a model-judged check, or a shipped guardrail by name (with options or without). The
 * deployment checks them where it checks agents, and the run store turns them into the kernel's
 * `Guardrail`s for each run.
 */

/** The shipped guardrails, by name. */
export const SHIPPED_GUARDRAILS = [
  'pii',
  'secrets',
  'prompt_injection',
  'answer_length',
  'topics',
] as const
export type ShippedGuardrailName = (typeof SHIPPED_GUARDRAILS)[number]

/** Who judges a model-judged check: an agent of the deployment (its model and instructions) or a model. */
export interface JudgeSpec {
  /** An agent whose model judges, its instructions put before `instructions`. */
  agent?: string
  /** A model in MODEL_ALLOWLIST; absent (and no agent): the deployment's MODEL. */
  model?: string
  /** What to judge and when to trip. */
  instructions: string
}

/** A check a model judges. */
export interface JudgedGuardrailSpec {
  name: string
  judge: JudgeSpec
  onError?: 'trip' | 'pass'
  timeoutMs?: number
}

/** A shipped guardrail with its options. */
export type ShippedGuardrailSpec =
  | { use: 'pii'; name?: string }
  | { use: 'secrets'; name?: string }
  | { use: 'prompt_injection'; action?: 'frame' | 'trip'; name?: string }
  | { use: 'answer_length'; maxChars?: number; action?: 'trip' | 'truncate'; name?: string }
  | {
      use: 'topics'
      topics: readonly string[]
      /** The judge: an agent's model, or a model; absent: the deployment's MODEL. */
      agent?: string
      model?: string
      name?: string
      onError?: 'trip' | 'pass'
      timeoutMs?: number
    }

export type GuardrailSpec =
  Exclude<ShippedGuardrailName, 'topics'> | ShippedGuardrailSpec | JudgedGuardrailSpec | Guardrail

/** An agent's guardrails by point; each list runs in order. */
export type AgentGuardrails = { readonly [P in GuardrailPoint]?: readonly GuardrailSpec[] }
