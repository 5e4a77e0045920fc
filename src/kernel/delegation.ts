import type { Budget, StopReason } from './budget'
import type { Outcome } from './outcome'
import type { Call, ChildRef, RunState, Usage } from './state'
import * as z from 'zod/mini'
import { defineTool, type DelegateSpec, type Tool } from './tool'

/**
 * Delegation (docs/agents.md#delegation): a call of an `ask_<agent>` tool starts a child run of
 * that agent and the parent waits for it without running, like a wait for a person. The kernel
 * knows only these shapes; where a child lives and how its end is learned are the caller's
 * (`Deps.children`).
 */

/** The prefix of a delegate's tool name: `ask_<agent>`. */
export const DELEGATE_PREFIX = 'ask_'

/** The tool name the model calls to delegate to `agent`. */
export function delegateToolName(agent: string): string {
  return `${DELEGATE_PREFIX}${agent}`
}

/** What a finished child gives its parent. */
export interface ChildOutcome {
  runId: string
  agent: string
  ok: boolean
  answer: string
  /** The validated answer of an agent with an output schema; null otherwise. */
  output: unknown
  stopReason: StopReason | null
  error: string | null
  usage: Pick<
    Usage,
    | 'promptTokens'
    | 'completionTokens'
    | 'estimated'
    | 'costUsd'
    | 'cachedPromptTokens'
    | 'modelCalls'
  >
  activeMs: number
}

/** Where a run's children are started and their ends read (a run store; none in `react()`). */
export interface ChildRuns {
  /**
   * Creates the child of `call`, or finds the one an earlier attempt created (the child's id
   * comes from the parent's id and the call's, so this is idempotent); a refusal (depth, budget,
   * unknown agent) is the call's error.
   */
  start(call: Call, spec: DelegateSpec, parent: RunState): Promise<Outcome<{ child: ChildRef }>>
  /** The child's outcome once it has finished; undefined while it runs. */
  outcome(call: Call): ChildOutcome | undefined
}

/** A call that started a child and has not recorded its end. */
export function waitingOnChild(call: Call): boolean {
  return call.status === 'started' && call.child !== null
}

/**
 * What the model sees of a child's end: the validated object (JSON) for an agent with an output
 * schema, else its answer; a failed child is an error naming the child run and its stopReason.
 */
export function childObservation(outcome: ChildOutcome): Outcome<{ text: string }> {
  if (!outcome.ok) {
    const why = outcome.error ? `: ${outcome.error}` : ''
    return {
      ok: false,
      error: `child run ${outcome.runId} (agent ${outcome.agent}) failed with stopReason ${outcome.stopReason ?? 'unknown'}${why}`,
    }
  }
  const text =
    outcome.output !== null && outcome.output !== undefined
      ? JSON.stringify(outcome.output)
      : outcome.answer
  return { ok: true, text }
}

/** The parent's usage with the child's added (the parent pays for what it delegated). */
export function withChildUsage(state: RunState, outcome: ChildOutcome): Usage {
  const u = state.usage
  const c = outcome.usage
  return {
    ...u,
    promptTokens: u.promptTokens + c.promptTokens,
    completionTokens: u.completionTokens + c.completionTokens,
    estimated: u.estimated || c.estimated,
    costUsd: u.costUsd === null && c.costUsd === null ? null : (u.costUsd ?? 0) + (c.costUsd ?? 0),
    cachedPromptTokens: u.cachedPromptTokens + c.cachedPromptTokens,
    modelCalls: u.modelCalls + c.modelCalls,
  }
}

/**
 * The child's budget: its agent's own, never more than what the parent has left of steps,
 * prompt tokens, cost and active time. Refused when the parent has too little left to give.
 */
export function carveBudget(parent: RunState, own: Budget): Outcome<{ budget: Budget }> {
  const b = parent.budget
  const steps = b.maxSteps - parent.steps.length
  const tokens = b.maxPromptTokens - parent.usage.promptTokens
  const seconds = Math.floor(b.maxSeconds - parent.activeMs / 1000)
  const cost = b.maxCostUsd === undefined ? undefined : b.maxCostUsd - (parent.usage.costUsd ?? 0)
  const short: string[] = []
  if (steps < 1) short.push('steps')
  if (tokens < 1) short.push('prompt tokens')
  if (seconds < 1) short.push('seconds')
  if (cost !== undefined && cost <= 0) short.push('cost')
  if (short.length) {
    return { ok: false, error: `the run has no ${short.join(', ')} left to give a child run` }
  }
  const budget: Budget = {
    ...own,
    maxSteps: Math.min(own.maxSteps, steps),
    maxPromptTokens: Math.min(own.maxPromptTokens, tokens),
    maxSeconds: Math.min(own.maxSeconds, seconds),
  }
  if (cost !== undefined) budget.maxCostUsd = Math.min(own.maxCostUsd ?? cost, cost)
  return { ok: true, budget }
}

/** Characters of a delegated task at most. */
export const MAX_DELEGATED_TASK = 20_000

/**
 * The `ask_<agent>` tool the model calls to delegate a task. Its handler never runs the call: a
 * delegated call goes through the act phase's own course (delegate-calls.ts).
 */
export function delegateTool(agent: string, description: string, sideEffects: boolean): Tool {
  return defineTool({
    name: delegateToolName(agent),
    description: `Hand a task to the ${agent} agent: ${description} It works on it as a run of its own (its own tools, budget and approvals) and answers when done; give it everything it needs in the task.`,
    params: z.object({
      task: z.string().check(z.minLength(1), z.maxLength(MAX_DELEGATED_TASK)),
    }),
    returns: `The ${agent} agent's answer (JSON when it answers with a schema), or a [ToolError] naming its run when it failed.`,
    delegate: { agent, sideEffects },
    handler: () => '[ToolError] a delegated call runs only inside a run store (Deps.children)',
  })
}
