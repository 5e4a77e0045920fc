/**
 * The deployment's agents (docs/agents.md), resolved against its settings and checked where
 * settings are checked: an agent naming a tool the deployment does not offer, a policy wider
 * than CONFIRM_POLICY, a budget over a maximum or a bad output schema is a configuration problem
 * naming the agent and the field, never a run that fails later.
 */
import type { AgentDefinition } from '../../agents/index'
import { AGENT_CATALOG } from '../../agents/index'
import { BudgetOverrides, type Budget } from '../kernel/budget'
import { narrowPolicy, type ConfirmPolicy } from '../kernel/confirm'
import { jsonSchemaOf } from '../kernel/json-schema-of'
import { FINAL_ANSWER_TOOL } from '../kernel/system-prompt'
import { outputSchemaProblems } from '../validation/output-schema'
import { describeIssues } from '../validation/describe-issues'
import { ConfigError } from '../errors/config-error'
import { overMaxima } from './budget'
import type { McpServerConfig } from '../mcp/index'
import { isMcpToolName } from '../mcp/index'
import { DEMO_MODEL, type ModelConfig } from '../llm/create-model'
import { delegationProblems } from './delegates'
import { guardrailProblems } from './guardrails'
import type { AgentGuardrails } from '../kernel/guardrails/spec'
import type { AgentPolicy } from '../kernel/tool'

/** An agent as this deployment runs it: every field resolved and within the settings. */
export interface Agent {
  name: string
  description: string
  /** Empty: none (the kernel's rules alone). */
  instructions: string
  /** The tools it may use (built-in names, MCP names and `<server>__*`); null: all of them. */
  tools: string[] | null
  model: string | null
  protocol: 'auto' | 'text' | 'native' | null
  temperature: number | null
  /** CONFIRM_POLICY, narrowed by the agent's `confirm`. */
  policy: ConfirmPolicy
  /** What the agent's runs get before a request narrows it. */
  budget: Budget
  /** The budget fields the agent set itself (a request may only ask less of these). */
  budgetSet: Partial<Budget>
  /** The answer's JSON Schema; null: a plain text answer. */
  outputSchema: Record<string, unknown> | null
  /** Slack channel ids it answers in. */
  slackChannels: string[]
  /** The channel its runs not started from Slack post their pending items in; null: none. */
  slackApprovals: string | null
  /** The agents it may delegate to (each an `ask_<name>` tool); empty: none. */
  delegates: string[]
  /** Its guardrails as the definition names them (checked); empty: none. */
  guardrails: AgentGuardrails
  /** Its policy as code, asked about every call of its runs; null: none. */
  callPolicy: AgentPolicy | null
}

/** One problem with one agent: which agent, which field, what is wrong. */
export interface AgentProblem {
  agent: string
  field: string
  message: string
  /**
   * The problem is this deployment's settings, not the definition: a tool ENABLED_TOOLS does not
   * enable, a model MODEL_ALLOWLIST does not allow. With ENABLED_AGENTS unset such an agent is left
   * out (a readiness warning says why) instead of failing the whole deployment.
   */
  settings?: true
}

/** A catalog agent the deployment does not offer although ENABLED_AGENTS is unset, and why. */
export interface AgentLeftOut {
  agent: string
  reason: string
}

/** Thrown by the loader for bad agents: every problem of every agent at once. */
export class AgentConfigError extends ConfigError {
  override name = 'AgentConfigError'
  constructor(readonly problems: AgentProblem[]) {
    const first = problems[0]!
    super(
      agentVariable(first.agent),
      problems.map((p) => `agent "${p.agent}" ${p.field}: ${p.message}`).join('; '),
    )
  }
}

/** The file an agent's problem is fixed in. */
export function agentVariable(name: string): string {
  // Files are kebab-case: agent log_analyst lives in agents/log-analyst.ts.
  return `agents/${name.replaceAll('_', '-')}.ts`
}

export const AGENT_NAME_PATTERN = /^[a-z][a-z0-9_-]{0,39}$/
/** Characters of an agent's instructions at most (a request's own are bounded tighter). */
export const MAX_AGENT_INSTRUCTIONS = 100_000
/** A Slack conversation id: a channel (`C…`), a private channel (`G…`), a DM (`D…`). */
export const SLACK_CHANNEL_PATTERN = /^[CGD][A-Z0-9]{2,}$/

/** What the agents are checked against. */
export interface AgentLimits {
  enabledTools: readonly string[]
  mcpServers: readonly McpServerConfig[]
  policy: ConfirmPolicy
  maxBudget: Budget
  defaultBudget: Budget
  model: ModelConfig
}

/** The agents `resolveAgentSet` offers (tests and tools that need only those). */
export function resolveAgents(
  enabled: readonly string[],
  limits: AgentLimits,
  catalog: readonly Readonly<AgentDefinition>[] = AGENT_CATALOG,
): Agent[] {
  return resolveAgentSet(enabled, limits, catalog).agents
}

/**
 * The agents ENABLED_AGENTS names and the agents they delegate to, resolved; `default` is always
 * there. Unset, it offers every agent of the catalog the settings allow: one whose model is the
 * offline demo only with MODEL=demo, and one whose only problems are the settings' (a tool not
 * enabled, a model not allowed) is left out with its reason, so an agent a person adds to the
 * catalog before enabling its tool never stops the others (docs/agents.md#adding-an-agent).
 * Throws ConfigError for an unknown name, AgentConfigError listing every problem of every agent
 * it offers.
 */
export function resolveAgentSet(
  enabled: readonly string[],
  limits: AgentLimits,
  catalog: readonly Readonly<AgentDefinition>[] = AGENT_CATALOG,
): { agents: Agent[]; leftOut: AgentLeftOut[] } {
  const byName = new Map(catalog.map((a) => [a.name, a]))
  const unknown = enabled.filter((n) => !byName.has(n))
  if (unknown.length) {
    throw new ConfigError(
      'ENABLED_AGENTS',
      `ENABLED_AGENTS names unknown agent${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}; ` +
        `known: ${[...byName.keys()].join(', ')}`,
    )
  }
  const demo = limits.model.model === DEMO_MODEL
  const names = enabled.length
    ? ['default', ...enabled]
    : catalog.filter((a) => a.model !== DEMO_MODEL || demo).map((a) => a.name)
  // An enabled agent brings the agents it delegates to (and theirs): they are part of it.
  const wanted = new Set(names)
  for (const name of wanted) {
    for (const d of byName.get(name)?.delegates ?? []) if (byName.has(d)) wanted.add(d)
  }
  const leftOut: AgentLeftOut[] = enabled.length
    ? []
    : catalog
        .filter((a) => a.model === DEMO_MODEL && !demo)
        .map((a) => ({
          agent: String(a.name),
          reason: `its model is "${DEMO_MODEL}" (the offline demo), offered only with MODEL=demo (MODEL is "${limits.model.model}")`,
        }))
  // A delegate stays checked in full: leaving it out would break the agent that delegates to it.
  const delegated = new Set(catalog.flatMap((a) => (wanted.has(a.name) ? (a.delegates ?? []) : [])))
  const problems: AgentProblem[] = []
  const chosen: Readonly<AgentDefinition>[] = []
  const agents: Agent[] = []
  for (const def of catalog.filter((a) => wanted.has(a.name))) {
    const own: AgentProblem[] = []
    const agent = resolveAgent(def, limits, own)
    const lenient = !enabled.length && def.name !== 'default' && !delegated.has(def.name)
    if (lenient && own.length && own.every((p) => p.settings)) {
      leftOut.push({
        agent: agent.name,
        reason: own.map((p) => `${p.field} ${p.message}`).join('; '),
      })
      continue
    }
    problems.push(...own.map(({ settings: _, ...p }) => p))
    chosen.push(def)
    agents.push(agent)
  }
  const claimed = new Map<string, string>()
  for (const agent of agents) {
    for (const channel of agent.slackChannels) {
      const other = claimed.get(channel)
      if (other) {
        problems.push({
          agent: agent.name,
          field: 'slack.channels',
          message: `channel ${channel} is already the channel of agent "${other}"`,
        })
      }
      claimed.set(channel, agent.name)
    }
  }
  if (!chosen.some((a) => a.name === 'default')) {
    problems.push({ agent: 'default', field: 'name', message: 'the catalog has no default agent' })
  }
  problems.push(...delegationProblems(agents, limits.enabledTools))
  const judges = { allowlist: limits.model.allowlist, agents: agents.map((a) => a.name) }
  for (const def of chosen) {
    problems.push(...guardrailProblems(String(def.name), def.guardrails, judges))
  }
  if (problems.length) throw new AgentConfigError(problems)
  return { agents, leftOut }
}

function resolveAgent(
  def: Readonly<AgentDefinition>,
  limits: AgentLimits,
  problems: AgentProblem[],
): Agent {
  const name = String(def.name)
  const problem = (field: string, message: string, settings?: true) =>
    problems.push({ agent: name, field, message, ...(settings && { settings }) })
  if (!AGENT_NAME_PATTERN.test(name)) {
    problem('name', `must match ${AGENT_NAME_PATTERN} (lowercase, from a letter, at most 40)`)
  }
  if (typeof def.description !== 'string' || !def.description.trim()) {
    problem('description', 'must be a non-empty string')
  }
  const instructions = typeof def.instructions === 'string' ? def.instructions.trim() : ''
  if (typeof def.instructions !== 'string') problem('instructions', 'must be a string')
  if (instructions.length > MAX_AGENT_INSTRUCTIONS) {
    problem(
      'instructions',
      `is ${instructions.length} characters; at most ${MAX_AGENT_INSTRUCTIONS}`,
    )
  }
  const tools = def.tools === undefined ? null : [...new Set(def.tools)]
  const offered = (t: string) =>
    limits.enabledTools.includes(t) || isMcpToolName(limits.mcpServers, t)
  const notOffered = (tools ?? []).filter((t) => !offered(t))
  if (notOffered.length) {
    problem(
      'tools',
      `${notOffered.join(', ')} not offered by this deployment (ENABLED_TOOLS: ${limits.enabledTools.join(', ') || 'none'}` +
        `${limits.mcpServers.length ? `; MCP_SERVERS: ${limits.mcpServers.map((s) => s.name).join(', ')}` : ''})`,
      true,
    )
  }
  // The native protocol asks for a structured answer through a finish tool of this name, and any
  // run may ask for one (output_schema): a real tool of the same name would be ambiguous.
  if ((tools ?? limits.enabledTools).includes(FINAL_ANSWER_TOOL)) {
    problem(
      'tools',
      `${FINAL_ANSWER_TOOL} is the name of the kernel's finish tool for structured answers; ` +
        'rename the tool',
    )
  }
  if (def.model !== undefined && !limits.model.allowlist.includes(def.model)) {
    problem(
      'model',
      `"${def.model}" is not in MODEL_ALLOWLIST (${limits.model.allowlist.join(', ')})`,
      true,
    )
  }
  if (def.protocol !== undefined && !['auto', 'text', 'native'].includes(def.protocol)) {
    problem('protocol', 'must be "auto", "text" or "native"')
  }
  const temperature = def.temperature
  if (
    temperature !== undefined &&
    !(typeof temperature === 'number' && temperature >= 0 && temperature <= 2)
  ) {
    problem('temperature', 'must be a number from 0 to 2')
  }
  let policy = limits.policy
  if (def.confirm !== undefined) {
    const narrowed = narrowPolicy(limits.policy, def.confirm)
    if (narrowed.ok) policy = narrowed.policy
    else problem('confirm', `${narrowed.error} (CONFIRM_POLICY)`)
  }
  const budgetSet = checkBudget(def.budget, limits.maxBudget, problem)
  let outputSchema: Record<string, unknown> | null = null
  if (def.output !== undefined) {
    try {
      outputSchema = jsonSchemaOf(def.output)
      const bad = outputSchemaProblems(outputSchema)
      if (bad.length) problem('output', bad.join('; '))
    } catch (err) {
      problem('output', (err as Error).message)
    }
  }
  const delegates = def.delegates === undefined ? [] : [...new Set(def.delegates)]
  if (!Array.isArray(def.delegates ?? []) || delegates.some((d) => typeof d !== 'string')) {
    problem('delegates', 'must be a list of agent names')
  }
  const channels = def.slack?.channels ?? []
  const badChannels = channels.filter((c) => !SLACK_CHANNEL_PATTERN.test(c))
  if (badChannels.length) {
    problem('slack.channels', `${badChannels.join(', ')} are not Slack channel ids (C…, G…)`)
  }
  const approvals = def.slack?.approvals
  if (approvals !== undefined && !SLACK_CHANNEL_PATTERN.test(String(approvals))) {
    problem(
      'slack.approvals',
      `${JSON.stringify(approvals)} is not a Slack channel id (C…, G…, as the channel's details show it; not a #name)`,
    )
  }
  return {
    name,
    description: String(def.description ?? ''),
    instructions,
    tools,
    model: def.model ?? null,
    protocol: def.protocol ?? null,
    temperature: temperature ?? null,
    policy,
    budget: { ...limits.defaultBudget, ...budgetSet },
    budgetSet,
    outputSchema,
    slackChannels: [...channels],
    slackApprovals: approvals === undefined ? null : String(approvals),
    delegates: delegates.map(String),
    guardrails: def.guardrails ?? {},
    callPolicy: callPolicyOf(def.policy, problem),
  }
}

/** The definition's `policy`: a function, or a problem naming the field. */
function callPolicyOf(
  policy: unknown,
  problem: (field: string, message: string) => void,
): AgentPolicy | null {
  if (policy === undefined) return null
  if (typeof policy === 'function') return policy as AgentPolicy
  problem(
    'policy',
    'must be a function (call, ctx) => "allow" | "ask" | "deny" (or { verdict, reason })',
  )
  return null
}

function checkBudget(
  budget: unknown,
  max: Budget,
  problem: (field: string, message: string) => void,
): Partial<Budget> {
  if (budget === undefined) return {}
  const parsed = BudgetOverrides.safeParse(budget)
  if (!parsed.success) {
    problem('budget', describeIssues(parsed.error.issues, budget).join('; '))
    return {}
  }
  const over = overMaxima(max, parsed.data as Partial<Budget>)
  if (over.length) problem('budget', `above the server maxima: ${over.join(', ')}`)
  return parsed.data as Partial<Budget>
}
