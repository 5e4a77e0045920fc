import * as z from 'zod/mini'
import type { AgentInput } from './agent-schema'
import { BudgetOverrides } from './budget'
import { jsonSchemaOf } from './json-schema-of'
import { outputSchemaProblems } from '../validation/output-schema'
import type { ConfirmHook, ConfirmPolicy } from './confirm'
import { describeIssues } from '../validation/describe-issues'
import { KernelUsageError } from '../errors/kernel-usage-error'
import { runSlice } from './machine'
import type { Model } from './model'
import { MemoryObservationStore } from './read-observation'
import { ToolRegistry } from './registry'
import { createRunState, PROTOCOL_SETTINGS, type RunState } from './state'
import type { AgentPolicy, Tool } from './tool'
import type { RunGuardrails } from './guardrails/guardrail'
import { toRunResult, type RunResult } from './trace'
import type { Deps, Pricing } from './transition'

export interface ReactOptions {
  model: Model
  /** Checked by the schema the HTTP API uses (`BudgetOverrides`); a bad field throws. */
  budget?: BudgetOverrides
  /** A policy, or a function that approves (true) or denies each side-effecting call. */
  confirm?: ConfirmPolicy | ConfirmHook
  /**
   * `auto` (the default): native tool calling, falling back to text when the provider refuses
   * tools; a tool call a model writes as text is read as that call either way. `text` for
   * models without function calling (Unicode tool names need it).
   */
  protocol?: 'auto' | 'text' | 'native'
  now?: () => number
  signal?: AbortSignal
  pricing?: Pricing
  /** Put first in the system prompt: the agent's role and how it works (docs/agents.md). */
  instructions?: string
  /**
   * The final answer's schema: a zod schema or a JSON Schema. The result's `output` is the
   * validated value; an answer that fails is a `[FormatError]`, and after the failed-step streak
   * the run ends `output_invalid`.
   */
  output?: z.ZodMiniType | z.core.$ZodType | Record<string, unknown>
  /**
   * Takes secrets out of observations, tool errors and replies before the run records them,
   * e.g. `createRedactor([process.env.MY_API_KEY])`.
   */
  redact?: (text: string) => string
  /**
   * Checks on the task, each call's arguments, each observation and the final answer
   * (docs/guardrails.md): `piiRedaction()`, `promptInjection()`, `judgedGuardrail({ … })` or
   * functions of your own.
   */
  guardrails?: Partial<RunGuardrails>
  /**
   * The agent's policy as code: `(call, ctx) => 'allow' | 'ask' | 'deny'` (or `{ verdict, reason }`)
   * for every call, beside each tool's own `policy`; the stricter applies
   * (docs/human-in-the-loop.md#policies-as-code).
   */
  policy?: AgentPolicy
  /** Called after every transition (for logs or checkpoints). */
  onState?: (state: RunState) => void
}

/** Runs a task to the end in memory: the classic `react()` loop over `advance`. */
export async function react(
  task: string,
  tools: Tool[] | ToolRegistry,
  options: ReactOptions,
): Promise<RunResult> {
  const budget = checkBudget(options.budget)
  if (
    options.protocol !== undefined &&
    !(PROTOCOL_SETTINGS as readonly string[]).includes(options.protocol)
  ) {
    throw new KernelUsageError(
      `react(): protocol must be "auto", "text" or "native", got ${JSON.stringify(options.protocol)}`,
      'bad_option',
    )
  }
  const registry = tools instanceof ToolRegistry ? tools : new ToolRegistry(tools)
  const given = typeof options.confirm === 'function' ? options.confirm : undefined
  // With a hook, side effects are asked through it. Without one nobody can answer in memory, so
  // `ask` and `allowlist` misses are denials (the model is told, and can use read-only tools).
  const policy: ConfirmPolicy =
    typeof options.confirm === 'object' ? options.confirm : { mode: given ? 'ask' : 'deny' }
  const hook: ConfirmHook = given ?? (() => false)
  const agent = agentOption(options)
  let state = createRunState({
    task,
    tools: registry.names(),
    policy,
    ...(options.protocol ? { protocol: options.protocol } : {}),
    ...(budget ? { budget } : {}),
    ...(options.now ? { now: options.now() } : {}),
    ...(agent ? { agent } : {}),
  })
  const deps: Deps = {
    model: options.model,
    registry,
    observations: new MemoryObservationStore(),
    confirm: hook,
    ...(options.now ? { now: options.now } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.pricing ? { pricing: options.pricing } : {}),
    ...(options.redact ? { redact: options.redact } : {}),
    ...(options.guardrails ? { guardrails: options.guardrails } : {}),
    ...(options.policy ? { policy: agentPolicyOption(options.policy) } : {}),
  }
  const unlimited = { maxTransitions: Infinity, maxWallMs: Infinity, maxBytes: Infinity }
  const { onState } = options
  const out = await runSlice(state, deps, unlimited, onState && ((s) => onState(s)))
  state = out.state
  return toRunResult(state)
}

/** The budget option, checked field by field; the error names every bad field and its rule. */
function checkBudget(budget: unknown): BudgetOverrides | undefined {
  if (budget === undefined) return undefined
  const checked = BudgetOverrides.safeParse(budget)
  if (checked.success) return checked.data
  // `budget.maxSteps: must be >= 1`, the wording the HTTP API answers with.
  const problems = describeIssues(checked.error.issues, budget).map((line) =>
    line.startsWith('(arguments)') ? `budget${line.slice('(arguments)'.length)}` : `budget.${line}`,
  )
  throw new KernelUsageError(`react(): invalid budget: ${problems.join('; ')}`, 'bad_budget')
}

/** The `instructions` and `output` options as the run's agent; none when neither is given. */
function agentOption(options: ReactOptions): AgentInput | undefined {
  const { instructions, output } = options
  if (instructions === undefined && output === undefined) return undefined
  if (instructions !== undefined && typeof instructions !== 'string') {
    throw new KernelUsageError('react(): instructions must be a string', 'bad_option')
  }
  let schema: Record<string, unknown> | null = null
  try {
    if (output !== undefined) schema = jsonSchemaOf(output)
  } catch (err) {
    throw new KernelUsageError(`react(): ${(err as Error).message}`, 'bad_option')
  }
  if (schema) {
    const problems = outputSchemaProblems(schema)
    if (problems.length) {
      throw new KernelUsageError(
        `react(): invalid output schema: ${problems.join('; ')}`,
        'bad_option',
      )
    }
  }
  return { instructions: instructions?.trim() || null, output: schema }
}

/** The `policy` option: a function, checked once here rather than at every call. */
function agentPolicyOption(policy: unknown): AgentPolicy {
  if (typeof policy !== 'function') {
    throw new KernelUsageError(
      'react(): policy must be a function (call, ctx) => "allow" | "ask" | "deny"',
      'bad_option',
    )
  }
  return policy as AgentPolicy
}
