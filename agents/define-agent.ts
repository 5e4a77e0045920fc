import type { BudgetOverrides } from '../src/kernel/budget'
import type { ConfirmPolicy } from '../src/kernel/confirm'
import type { AgentGuardrails } from '../src/kernel/guardrails/spec'
import type { AgentPolicy } from '../src/kernel/tool'

/**
 * An agent (docs/agents.md): what a run is for. Instructions, the tools it may use, its model,
 * protocol, policy, budget defaults, the shape of its answer and the Slack channels it answers
 * in. Every field is checked against the deployment's settings where settings are checked
 * (`/readyz`): a field the deployment cannot honour is a `503 misconfigured` naming the agent.
 */
export interface AgentDefinition {
  /** Lowercase letters, digits, `-` and `_`, from a letter: what `"agent"` names in requests. */
  name: string
  /** One line: what the agent is for (GET /v1/agents, the console's picker). */
  description: string
  /** Put first in the system prompt of every run of the agent, before the kernel's own rules. */
  instructions: string
  /**
   * Tool names: built-in and one-file tools (each enabled in ENABLED_TOOLS), MCP tools as
   * `<server>__<tool>` or `<server>__*`. Absent: every enabled tool and every MCP server's.
   */
  tools?: readonly string[]
  /** A model in MODEL_ALLOWLIST (or MODEL); absent: the deployment's MODEL. */
  model?: string
  protocol?: 'auto' | 'text' | 'native'
  /** 0–2; absent: MODEL_TEMPERATURE. */
  temperature?: number
  /** Never wider than CONFIRM_POLICY; absent: CONFIRM_POLICY. */
  confirm?: ConfirmPolicy
  /** The agent's runs' budget defaults, never above the server maxima (MAX_STEPS, …). */
  budget?: BudgetOverrides
  /** A zod schema for the final answer: the run's `output` is the validated value. */
  output?: unknown
  /**
   * Agents this one may hand a task to (docs/agents.md#delegation): the model gets one tool per
   * name, `ask_<name>({ task })`, and each call is a child run of that agent. No cycles.
   */
  delegates?: readonly string[]
  /**
   * Checks on the task (`input`), each call's arguments (`toolInput`), each observation
   * (`toolOutput`) and the final answer (`output`): shipped ones by name, functions, or
   * model-judged checks (docs/guardrails.md).
   */
  guardrails?: AgentGuardrails
  /**
   * Decides, in code, about every call of the agent's runs, whatever the tool: `'allow'`, `'ask'`
   * or `'deny'`, or `{ verdict, reason }`. Composed with each tool's own `policy` and the
   * confirm policy: the strictest applies (docs/human-in-the-loop.md#policies-as-code).
   */
  policy?: AgentPolicy
  /**
   * Slack: `channels`, the channel ids where mentions and slash commands go to this agent;
   * `approvals`, the channel id where the pending items of its runs not started from Slack (the
   * API, a webhook, MCP, A2A) are posted as cards (docs/agents.md#slack).
   */
  slack?: { channels?: readonly string[]; approvals?: string }
}

/** Declares an agent (one file per agent in agents/, one line in agents/catalog.ts). */
export function defineAgent(definition: AgentDefinition): Readonly<AgentDefinition> {
  return Object.freeze({ ...definition })
}
