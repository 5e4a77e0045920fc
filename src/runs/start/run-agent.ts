/**
 * What a run request gets of its agent (docs/agents.md): the agent's tools, budget and policy,
 * which the request may narrow and never widen (a wider ask is refused, naming the field), and its
 * instructions and output schema, which a webhook caller may give ad hoc instead.
 */
import type { Agent, ServiceConfig } from '../../config'
import { agentTools, allToolsOf, isMcpToolName, splitTools } from '../../config'
import type { AgentInput } from '../../kernel/agent-schema'
import type { Budget } from '../../kernel/budget'
import { narrowPolicy, type ConfirmPolicy } from '../../kernel/confirm'
import { outputSchemaProblems } from '../../validation/output-schema'
import { StartError } from './start-error'

export interface AgentAsk {
  agent?: string
  instructions?: string
  outputSchema?: Record<string, unknown>
  tools?: string[]
  budget?: Partial<Budget>
  confirm?: ConfirmPolicy
}

export interface RunAgent {
  agent: Agent
  /** The enabled tools and the MCP tools the run may use. */
  tools: string[]
  mcpTools: string[]
  /** The agent's budget with the request's narrower values (the server maxima checked apart). */
  budget: Budget
  policy: ConfirmPolicy
  /** What the run's state copies. */
  snapshot: AgentInput
}

/** The agent the request names (omitted: `default`), narrowed by the request. */
export function runAgent(config: ServiceConfig, ask: AgentAsk): RunAgent {
  const agent = findAgent(config, ask.agent ?? 'default')
  const { tools, mcpTools } = resolveTools(config, agent, ask.tools)
  const narrowed = narrowPolicy(agent.policy, ask.confirm)
  if (!narrowed.ok) {
    const whose = agent.name === 'default' ? '' : ` (agent "${agent.name}")`
    throw new StartError('invalid', 'policy_not_allowed', `confirm: ${narrowed.error}${whose}`, {
      field: 'confirm',
    })
  }
  const over = Object.entries(agent.budgetSet)
    .filter(([key, limit]) => {
      const asked = ask.budget?.[key as keyof Budget]
      return typeof asked === 'number' && typeof limit === 'number' && asked > limit
    })
    .map(([key, limit]) => `budget.${key} ${ask.budget![key as keyof Budget]} > ${limit}`)
  if (over.length) {
    throw new StartError(
      'invalid',
      'budget_over_agent',
      `above agent "${agent.name}"'s budget: ${over.join(', ')}; a run may only ask for less`,
      { field: 'budget', agentBudget: agent.budgetSet },
    )
  }
  if (ask.outputSchema !== undefined) {
    const problems = outputSchemaProblems(ask.outputSchema)
    if (problems.length) {
      throw new StartError(
        'invalid',
        'invalid_output_schema',
        `output_schema ${problems.join('; ')}`,
        {
          field: 'output_schema',
          problems,
        },
      )
    }
  }
  const instructions = ask.instructions ?? agent.instructions
  return {
    agent,
    tools,
    mcpTools,
    budget: { ...agent.budget, ...ask.budget },
    policy: narrowed.policy,
    snapshot: {
      name: agent.name,
      instructions: instructions.trim() || null,
      output: ask.outputSchema ?? agent.outputSchema,
      model: agent.model,
      temperature: agent.temperature,
    },
  }
}

/**
 * The enabled tools the run may use, and the MCP tools it asks for. An MCP server's list is only
 * fetched when the run starts (runs/mcp-tools.ts), so `<server>__<tool>` is accepted here for any
 * configured server the agent may use and `<server>__*` stands for all its tools; no `tools`
 * means every tool of the agent (the default agent: every enabled tool and every server's).
 */
function resolveTools(
  config: ServiceConfig,
  agent: Agent,
  requested: string[] | undefined,
): { tools: string[]; mcpTools: string[] } {
  const { own, builtIn } = agentTools(config, agent)
  const split = (names: string[]) => splitTools(names, builtIn)
  if (!requested) return split(own)
  const unknown = requested.filter((t) => !builtIn(t) && !isMcpToolName(config.mcpServers, t))
  if (unknown.length) {
    throw new StartError(
      'invalid',
      'unknown_tools',
      `tools not enabled on this server: ${unknown.join(', ')}`,
      {
        unknown,
        enabled: config.enabledTools,
        ...(config.mcpServers.length ? { mcpServers: config.mcpServers.map((s) => s.name) } : {}),
      },
    )
  }
  const outside = requested.filter((t) => !covers(own, t))
  if (outside.length) {
    throw new StartError(
      'invalid',
      'tools_not_allowed',
      `tools: ${outside.join(', ')} not tools of agent "${agent.name}" (${own.join(', ')}); a run may only narrow them`,
      { field: 'tools', outside, agentTools: own },
    )
  }
  return split([...new Set(requested)])
}

/** Whether the agent's tool list covers `name` (`<server>__*` covers every tool of it). */
function covers(own: readonly string[], name: string): boolean {
  if (own.includes(name)) return true
  const server = name.split('__')[0]!
  return name.includes('__') && own.includes(allToolsOf(server))
}

/**
 * The agent named `name`, or the refusal that names it and the agents there are (and, for a
 * catalog agent the deployment leaves out, why).
 */
export function findAgent(
  config: Pick<ServiceConfig, 'agents' | 'agentsLeftOut'>,
  name: string,
): Agent {
  const { agents } = config
  const found = agents.find((a) => a.name === name)
  if (found) return found
  const left = config.agentsLeftOut.find((a) => a.agent === name)
  const names = agents.map((a) => a.name).join(', ')
  throw new StartError(
    'not_found',
    'agent_not_found',
    left
      ? `agent "${left.agent}" is not offered by this deployment: ${left.reason}; agents: ${names}`
      : `no agent "${name.slice(0, 60)}"; agents: ${names}`,
    { agents: agents.map((a) => a.name) },
  )
}
