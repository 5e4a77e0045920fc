import * as z from 'zod/mini'
import { CONFIRM_MODES } from '../kernel/confirm'

/** Request and response schemas of the HTTP API: they validate requests and make /openapi.json. */

export const RUN_ID_PATTERN = /^run_[0-9a-f]{32}$/

const toolName = z.string().check(z.regex(/^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$/))

export const BudgetOverrides = z.strictObject({
  maxSteps: z.optional(z.number().check(z.int(), z.minimum(1))),
  maxSeconds: z.optional(z.number().check(z.positive())),
  maxPromptTokens: z.optional(z.number().check(z.int(), z.minimum(1))),
  maxCostUsd: z.optional(z.number().check(z.positive())),
  maxConsecutiveErrors: z.optional(z.number().check(z.int(), z.minimum(1), z.maximum(100))),
  maxObservationTokens: z.optional(z.number().check(z.int(), z.minimum(50), z.maximum(20_000))),
  loopGuardWindow: z.optional(z.number().check(z.int(), z.minimum(0), z.maximum(50))),
  approvalTtlSeconds: z.optional(z.number().check(z.int(), z.minimum(1))),
})

export const CreateRunBody = z.strictObject({
  /** What the agent should do. */
  task: z.string().check(z.trim(), z.minLength(1), z.maxLength(20_000)),
  /** A subset of the deployment's enabled tools; all enabled tools when absent. */
  tools: z.optional(z.array(toolName).check(z.maxLength(64))),
  /** Lower limits than the server's (never higher). */
  budget: z.optional(BudgetOverrides),
  protocol: z.optional(z.enum(['auto', 'text', 'native'])),
  /** Narrows the configured confirm policy (never widens it). */
  confirm: z.optional(
    z.strictObject({ mode: z.enum(CONFIRM_MODES), tools: z.optional(z.array(toolName)) }),
  ),
  /** One of MODEL_ALLOWLIST. */
  model: z.optional(z.string().check(z.minLength(1), z.maxLength(200))),
  /** Receives the final RunResult, signed with WEBHOOK_SECRET. */
  callback_url: z.optional(z.string().check(z.url(), z.maxLength(2000))),
  /** `all`: callback_url also receives every run event; `final` (default): only the result. */
  callback_events: z.optional(z.enum(['final', 'all'])),
  metadata: z.optional(z.record(z.string(), z.unknown())),
})

export const DecisionBody = z.strictObject({
  decision: z.enum(['approve', 'deny']),
  /** The `argsHash` of the pending approval: a decision binds to exactly those arguments. */
  args_hash: z.string().check(z.regex(/^[0-9a-f]{64}$/)),
  reason: z.optional(z.string().check(z.maxLength(500))),
  /** Who decides (recorded as `api:<by>`). */
  by: z.optional(z.string().check(z.minLength(1), z.maxLength(100))),
})

export const CancelBody = z.strictObject({
  reason: z.optional(z.string().check(z.maxLength(500))),
  by: z.optional(z.string().check(z.minLength(1), z.maxLength(100))),
})

export const ErrorBody = z.object({
  error: z.object({ code: z.string(), message: z.string(), details: z.optional(z.unknown()) }),
})

export const CreatedRun = z.object({
  id: z.string(),
  status: z.string(),
  created: z.boolean(),
  links: z.object({
    self: z.string(),
    trace: z.string(),
    cancel: z.string(),
    approvals: z.string(),
  }),
})
