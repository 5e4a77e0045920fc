import type * as zc from 'zod/v4/core'
import { TOOL_NAME_PATTERN } from './names'

/**
 * What a tool handler receives besides its validated arguments. Read its fields by name:
 * `signal` is made on first use, so a spread or `Object.assign` copy does not carry it.
 */
export interface ToolContext {
  runId: string
  /** The model's call id (unique within the run; ids from text-protocol runs repeat across runs). */
  callId: string
  /**
   * `<run id>:<call id>`: unique across runs and stable across retries of the same call. Send it
   * as the idempotency key of anything that changes the world.
   */
  idempotencyKey: string
  /** Aborted when the tool's own timeout elapses or the run is cancelled. */
  signal: AbortSignal
  /** Stored whole observations (large outputs by handle). */
  observations: ObservationStore
  /** Observations longer than this many tokens are truncated: size results to fit. */
  maxObservationTokens: number
  /**
   * The question or connection the call waited for, once a person resolved it (the answer, who
   * gave it); null when the call waited for nothing but an approval.
   */
  person: ResolvedItem | null
}

/**
 * What a tool asks a person for (docs/human-in-the-loop.md#pending-items): the kind of pending
 * item its call waits on, and what the item shows.
 */
export interface PersonRequest {
  kind: 'question' | 'connect'
  /** The question, or what to connect and why. */
  message: string
  /** A question's choices: the answer must be one of them. */
  choices?: string[]
  /** A question's JSON Schema: the answer must match it. */
  schema?: Record<string, unknown>
  /** What the code that asked shows or needs back (a connect item's server, its URL). */
  details?: Record<string, unknown>
}

/** What a tool handler sees of the item its call waited for, once a person resolved it. */
export interface ResolvedItem {
  kind: 'approval' | 'question' | 'connect'
  /** The answer to a question, or what a connect item was resolved with. */
  answer: unknown
  by: string
}

/** What a code policy decides for one call (docs/human-in-the-loop.md#policies-as-code). */
export type PolicyVerdict = 'allow' | 'ask' | 'deny'

/** What a code policy sees besides the arguments. */
export interface PolicyContext {
  runId: string
  callId: string
  /** The run's agent. */
  agent: string
}

/**
 * A policy written as code: a verdict, or a verdict with the reason the trace records. It runs
 * at review, synchronously; one that throws (or answers anything else) asks a person.
 */
export type CodePolicy<A = never> = (
  args: A,
  ctx: PolicyContext,
) => PolicyVerdict | { verdict: PolicyVerdict; reason?: string }

/** A call as an agent's policy sees it: which tool, with what arguments, and whether it changes the world. */
export interface PolicyCall {
  name: string
  args: unknown
  sideEffect: boolean
}

/**
 * An agent's policy written as code (docs/human-in-the-loop.md#policies-as-code): asked about
 * every call of the agent's runs, whatever the tool, beside the tool's own `policy`; the stricter
 * of the two (and of the confirm policy) applies.
 */
export type AgentPolicy = (
  call: PolicyCall,
  ctx: PolicyContext,
) => PolicyVerdict | { verdict: PolicyVerdict; reason?: string }

/** What a delegate tool says about its agent (kernel/delegation.ts). */
export interface DelegateSpec {
  /** The agent a call starts a child run of. */
  agent: string
  /**
   * The agent (or an agent it delegates to) has a tool that changes the world: its calls run
   * one at a time in the model's order, like side effects; otherwise beside read-only calls.
   */
  sideEffects: boolean
}

/** Whole observations kept beside a run, read back in slices with `read_observation`. */
export interface ObservationStore {
  put(handle: string, text: string): void | Promise<void>
  get(handle: string): string | undefined | Promise<string | undefined>
}

/** Any zod object schema (classic `zod` or `zod/mini`). */
export type ParamsSchema = zc.$ZodObject

export interface ToolDefinition<P extends ParamsSchema = ParamsSchema> {
  /** `snake_case`, unique in a registry; what the model writes as the action. */
  name: string
  /** When to use it and what to put in each argument: written for the model. */
  description: string
  params: P
  /**
   * The JSON Schema the model is shown for the arguments, when it is not derived from `params`:
   * an MCP server's schema, passed through as is. `params` must accept the same arguments.
   */
  inputSchema?: Readonly<Record<string, unknown>>
  /** What the result looks like, in a sentence (shown to the model). */
  returns: string
  /** True when running it changes the world; then the confirm policy decides first. */
  sideEffect?: boolean
  /** True when running it twice with the same idempotency key (the call id) is harmless. */
  idempotent?: boolean
  /** Per-tool timeout in ms (default 10 000). */
  timeoutMs?: number
  /**
   * Set on an `ask_<agent>` tool: a call starts a child run of that agent, and the run waits for
   * it (docs/agents.md#delegation). Its handler is never what runs the call.
   */
  delegate?: DelegateSpec
  /**
   * A cheap check of the validated arguments that has no side effect (an allowlist, a range that
   * depends on configuration): returns what is wrong, or undefined. It runs after the schema and
   * before the confirm policy, so a call that fails it gets its `[ToolError]` at once and nobody
   * is asked to approve it.
   */
  check?: (args: zc.output<P>, ctx: CheckContext) => string | undefined
  /**
   * What a call needs from a person before it runs (a question to answer, an account to
   * connect), or null: asked at review, after `check`; the call waits on a pending item of that
   * kind (docs/human-in-the-loop.md#pending-items). A handler that finds out only when it runs
   * returns `personNeeded(…)` instead.
   */
  person?: (
    args: zc.output<P>,
    ctx: CheckContext,
  ) => PersonRequest | null | Promise<PersonRequest | null>
  /** False: an approver may not change the arguments before approving (default true). */
  editable?: boolean
  /**
   * Decides per call whether it runs, waits for a person or is refused, within the confirm
   * policy (never wider: `allow` under `ask` still asks). Recorded on the call with its reason.
   */
  policy?: CodePolicy<zc.output<P>>
  /** A candidate policy, asked and recorded beside the one that decides, never applied. */
  shadowPolicy?: CodePolicy<zc.output<P>>
  handler: (args: zc.output<P>, ctx: ToolContext) => unknown | Promise<unknown>
}

/** What a tool's `check` may look at besides the arguments. */
export interface CheckContext {
  runId: string
  callId: string
}

/** A tool after `defineTool`: defaults applied, ready for a registry. */
export interface Tool<P extends ParamsSchema = ParamsSchema> extends ToolDefinition<P> {
  sideEffect: boolean
  idempotent: boolean
  timeoutMs: number
}

export const DEFAULT_TOOL_TIMEOUT_MS = 10_000

/** Declares a tool; checks the definition once so mistakes surface at startup, not mid-run. */
export function defineTool<P extends ParamsSchema>(def: ToolDefinition<P>): Tool<P> {
  if (!TOOL_NAME_PATTERN.test(def.name)) {
    throw new TypeError(
      `defineTool: name "${def.name}" must be a letter or _, then letters, digits, _ or - (at most 64 characters)`,
    )
  }
  if (!def.description?.trim()) {
    throw new TypeError(`defineTool(${def.name}): a description is required; the model reads it`)
  }
  if (def.params?._zod?.def?.type !== 'object') {
    throw new TypeError(`defineTool(${def.name}): params must be a zod object schema`)
  }
  if (def.check !== undefined && typeof def.check !== 'function') {
    throw new TypeError(`defineTool(${def.name}): check must be a function when given`)
  }
  for (const key of ['policy', 'shadowPolicy'] as const) {
    if (def[key] !== undefined && typeof def[key] !== 'function') {
      throw new TypeError(`defineTool(${def.name}): ${key} must be a function when given`)
    }
  }
  if (def.person !== undefined && typeof def.person !== 'function') {
    throw new TypeError(`defineTool(${def.name}): person must be a function when given`)
  }
  if (typeof def.handler !== 'function') {
    throw new TypeError(`defineTool(${def.name}): handler must be a function`)
  }
  const timeoutMs = def.timeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    throw new TypeError(`defineTool(${def.name}): timeoutMs must be a positive number of ms`)
  }
  return {
    ...def,
    sideEffect: def.sideEffect ?? false,
    idempotent: def.idempotent ?? false,
    timeoutMs,
  }
}
