import * as z from 'zod/mini'
import { DECISION_REQUESTS } from '../../kernel/approvals'
import { BudgetOverrides } from '../../kernel/budget'
import { CONFIRM_MODES } from '../../kernel/confirm'
import { TOOL_NAME_PATTERN } from '../../kernel/names'
import { PROTOCOL_SETTINGS } from '../../kernel/state'
import { CALLBACK_EVENTS } from '../../api/enums'
import { SHA256_HEX_PATTERN } from '../../validation/patterns'
import { AGENT_NAME_PATTERN } from '../../config'
import type { RunChoices } from '../../runs/start'

/** Request schemas of the HTTP API: they validate requests and make /openapi.json. */

export { RUN_ID_PATTERN } from '../../kernel/names'

/** Characters of a request's own instructions at most. */
export const MAX_REQUEST_INSTRUCTIONS = 20_000

const toolName = z.string().check(z.regex(TOOL_NAME_PATTERN))
/** A tool name, or `<server>__*`: every tool of an MCP server. */
const runToolName = z
  .string()
  .check(
    z.regex(
      new RegExp(
        `${TOOL_NAME_PATTERN.source}|^[a-z][a-z0-9_-]{0,31}__\\*$`,
        TOOL_NAME_PATTERN.flags,
      ),
    ),
  )

/** The budget a request may set: the kernel's schema, the same one `react()` checks. */
export { BudgetOverrides }

const CreateRunFields = z.strictObject({
  /** What the agent should do. */
  task: z.string().check(z.trim(), z.minLength(1), z.maxLength(20_000)),
  /**
   * A subset of the deployment's enabled tools, MCP tools as `<server>__<tool>` or `<server>__*`;
   * all enabled tools and every MCP server's tools when absent.
   */
  tools: z.optional(z.array(runToolName).check(z.maxLength(64))),
  /** Lower limits than the server's (never higher). */
  budget: z.optional(BudgetOverrides),
  protocol: z.optional(z.enum(PROTOCOL_SETTINGS)),
  /** Narrows the configured confirm policy (never widens it). */
  confirm: z.optional(
    z.strictObject({ mode: z.enum(CONFIRM_MODES), tools: z.optional(z.array(toolName)) }),
  ),
  /** The agent to run (GET /v1/agents); absent: `default`. */
  agent: z.optional(z.string().check(z.regex(AGENT_NAME_PATTERN))),
  /** Ad-hoc instructions, put first in the system prompt instead of the agent's. */
  instructions: z.optional(
    z.string().check(z.trim(), z.minLength(1), z.maxLength(MAX_REQUEST_INSTRUCTIONS)),
  ),
  /**
   * Ad-hoc JSON Schema of the final answer, instead of the agent's: at most 16 384 characters
   * and 12 levels deep; the run's `output` is the validated answer.
   */
  output_schema: z.optional(z.record(z.string(), z.unknown())),
  /** One of MODEL_ALLOWLIST. */
  model: z.optional(z.string().check(z.minLength(1), z.maxLength(200))),
  /** Receives the final RunResult, signed with WEBHOOK_SECRET. */
  callback_url: z.optional(z.string().check(z.url(), z.maxLength(2000))),
  /** `all`: callback_url also receives every run event; `final` (default): only the result. */
  callback_events: z.optional(z.enum(CALLBACK_EVENTS)),
  metadata: z.optional(z.record(z.string(), z.unknown())),
  /**
   * The id of a finished run (succeeded or failed) to continue: the new run starts with the
   * conversation's earlier turns (at most budget.maxHistoryTokens). Needs runs:read too.
   */
  continue: z.optional(z.string().check(z.minLength(1), z.maxLength(200))),
})

/**
 * `POST /v1/runs`: the body as a client writes it (snake_case, the document's `CreateRun`),
 * parsed into what the run-start service takes (runs/start's `RunChoices`).
 */
export const CreateRunBody = z.pipe(
  CreateRunFields,
  z.transform(({ output_schema, callback_url, callback_events, ...same }): RunChoices => ({
    ...same,
    ...(output_schema !== undefined ? { outputSchema: output_schema } : {}),
    ...(callback_url !== undefined ? { callbackUrl: callback_url } : {}),
    ...(callback_events !== undefined ? { callbackEvents: callback_events } : {}),
  })),
)

/**
 * The decider is the token's name: there is no `by` (a body with one is refused with
 * `by_not_accepted`). `argsHash`, the spelling responses use, is accepted for `args_hash`.
 */
export const DecisionBody = z.strictObject({
  decision: z.enum(DECISION_REQUESTS),
  /** The `argsHash` of the pending approval: a decision binds to exactly those arguments. */
  args_hash: z
    .string()
    .check(
      z.regex(
        SHA256_HEX_PATTERN,
        "must be the pending approval's argsHash (64 hex digits), as GET /v1/runs/:id shows it",
      ),
    ),
  reason: z.optional(z.string().check(z.maxLength(500))),
  /**
   * With `approve`: the arguments the call runs with instead of the model's, checked strictly
   * against the tool's schema (docs/human-in-the-loop.md#edit-then-approve).
   */
  args: z.optional(z.record(z.string(), z.unknown())),
})

const itemHash = (what: string) =>
  z
    .string()
    .check(
      z.regex(
        SHA256_HEX_PATTERN,
        `must be the pending ${what}'s hash (64 hex digits), as the inbox shows it`,
      ),
    )

/**
 * An answer to a question a run asks a person (`ask_person`, an MCP server's elicitation): the
 * answer, checked against the question's choices or schema, or a decline.
 */
export const AnswerBody = z.union([
  z.strictObject({
    question_hash: itemHash('question'),
    /** A choice, a string, or a value matching the question's schema. */
    answer: z.unknown().check(z.refine((v) => v !== undefined && v !== null, 'answer is required')),
  }),
  z.strictObject({
    question_hash: itemHash('question'),
    decline: z.literal(true),
    reason: z.optional(z.string().check(z.maxLength(500))),
  }),
])

export const CancelBody = z.strictObject({
  reason: z.optional(z.string().check(z.maxLength(500))),
})

/** What a client sends to start a run (the schema's input side). */
export type CreateRunInput = z.input<typeof CreateRunBody>
export type DecisionInput = z.input<typeof DecisionBody>
export type AnswerInput = z.input<typeof AnswerBody>
export type CancelInput = z.input<typeof CancelBody>

/** `POST /v1/connections/:server/link`: the run and item waiting for it, and the scopes asked. */
export const ConnectLinkBody = z.strictObject({
  runId: z.optional(z.string().check(z.maxLength(200))),
  itemId: z.optional(z.string().check(z.maxLength(200))),
  scopes: z.optional(z.string().check(z.maxLength(1_000))),
})
