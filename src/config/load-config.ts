import { sliceForCpuMs, type EdgeSlice } from '../kernel/budget'
import { CONFIRM_MODES, type ConfirmPolicy } from '../kernel/confirm'
import type { Tool } from '../kernel/tool'
import { DEMO_MODEL, type ModelConfig } from '../llm/create-model'
import { parseApprovers } from '../slack/approvers'
import { buildToolset } from '../../tools/catalog'
import { checkMcpOAuthSettings, readMcpServers, type McpServerConfig } from '../mcp/index'
import type { EnvVars } from '../env-vars'
import { ConfigError } from '../errors/config-error'
import { modelConfigFromEnv, requireModelKey } from './model'
import { securityConfigFromEnv, type SecurityConfig } from './security'
import * as setting from '../settings/setting'
import { readSettings, type EnvRecord } from '../settings/setting'
import { LOG_LEVELS } from './log-level'
import { eventStreamLimits, type EventStreamLimits } from './event-streams'
import { otelConfigFromEnv, type OtelConfig } from './otel'
import { resolveAgentSet, SLACK_CHANNEL_PATTERN, type Agent, type AgentLeftOut } from './agents'
import { delegateTools } from './delegates'
import { retentionMsFromEnv } from './retention'
import { BUDGET_SETTINGS, serverBudgets, type ServerBudgets } from './budget'
import { requireLongSecrets } from './secrets'

/** Everything the service reads from its environment, validated once (budgets: ServerBudgets). */
export interface ServiceConfig extends ServerBudgets {
  policy: ConfirmPolicy
  /** Names of the tools this deployment offers (ENABLED_TOOLS), in order. */
  enabledTools: string[]
  /** Those tools, built once from the catalog with their own settings. */
  tools: readonly Tool[]
  /** MCP servers whose tools runs may use (MCP_SERVERS); their lists are fetched per run. */
  mcpServers: McpServerConfig[]
  slice: EdgeSlice
  model: ModelConfig
  /** The agents runs may name (ENABLED_AGENTS), checked against the settings above. */
  agents: Agent[]
  /** The catalog's agents ENABLED_AGENTS (unset) left to it that it cannot offer, and why. */
  agentsLeftOut: AgentLeftOut[]
  /** The `ask_<agent>` tool of each agent another delegates to (docs/agents.md#delegation). */
  delegateTools: readonly Tool[]
  /** How deep child runs may nest: a run this deep starts no child (MAX_DELEGATION_DEPTH). */
  maxDelegationDepth: number
  /** Hosts a run's callback_url may point to; empty = any public https host. */
  callbackAllowlist: string[]
  /** Tokens, who decides Slack runs, the compiled callback allowlist. */
  security: SecurityConfig
  slack: {
    apiUrl: string
    approvers: string[]
    forbidSelfApproval: boolean
    /** A direct message outside a thread continues the DM's latest run started this recently. */
    dmConversationMinutes: number
    /** Stream the answer with chat.startStream/appendStream/stopStream (SLACK_STREAM). */
    stream: boolean
    /** The app is a Slack assistant app: set the thread status while a run works. */
    assistant: boolean
    /**
     * Where the pending items of runs not started from Slack are posted when their agent names
     * no `slack.approvals` channel (SLACK_APPROVALS_CHANNEL); null: nowhere.
     */
    approvalsChannel: string | null
  }
  /** Open event streams and their queues (read again by the events route on its own). */
  eventStreams: EventStreamLimits
  /** How long a finished run is kept (RUN_RETENTION_DAYS); undefined: forever. */
  retentionMs: number | undefined
  /** Where run traces are exported (OTEL_EXPORTER_OTLP_*); undefined: nowhere. */
  otel: OtelConfig | undefined
}

/** Tools enabled when ENABLED_TOOLS is unset: the ones that need no other setting. */
export const DEFAULT_TOOLS = ['calculator']

/** The demo's pretend incident tools: the default only with MODEL=demo. */
export const DEMO_TOOLS = ['query_metrics', 'search_logs', 'read_repo_file', 'rollback_deploy']

/**
 * The service's own settings. A new one is a line here (or, for a part with several, a file of
 * its own in src/config/ declaring them the same way) and a row in docs/configuration.md.
 */
const SERVICE_SETTINGS = {
  CONFIRM_POLICY: setting.oneOf(CONFIRM_MODES, 'ask'),
  CONFIRM_ALLOWLIST: setting.list(),
  ENABLED_TOOLS: setting.list(),
  ENABLED_AGENTS: setting.list(),
  MAX_DELEGATION_DEPTH: setting.number({ min: 1, max: 10, integer: true, fallback: 3 }),
  // MAX_STEPS, MAX_SECONDS, … and MAX_HISTORY_TOKENS: one per budget key the server limits.
  ...BUDGET_SETTINGS,
  CPU_MS: setting.number({ min: 1_000, max: 300_000, integer: true, fallback: 30_000 }),
  CALLBACK_ALLOWLIST: setting.list(),
  SLACK_API_URL: setting.httpUrl('https://slack.com/api'),
  SLACK_APPROVERS: setting.parsedBy(parseApprovers),
  SLACK_FORBID_SELF_APPROVAL: setting.flag(),
  SLACK_DM_CONVERSATION_MINUTES: setting.number({
    min: 0,
    max: 7 * 24 * 60,
    integer: true,
    fallback: 60,
  }),
  SLACK_STREAM: setting.oneOf(['auto', 'off'], 'off'),
  SLACK_ASSISTANT: setting.flag(),
  SLACK_APPROVALS_CHANNEL: setting.parsedBy((raw) => {
    if (raw === undefined) return null
    if (!SLACK_CHANNEL_PATTERN.test(raw))
      throw new Error(
        `must be a Slack channel id (C…, G…, as the channel's details show it; not a #name)`,
      )
    return raw
  }),
  // Read by runs/log.ts on every line; checked here so a typo is reported like any setting.
  LOG_LEVEL: setting.oneOf(LOG_LEVELS, 'info'),
}

const cache = new WeakMap<object, ServiceConfig>()

/** Parses and caches the configuration for this env object. Throws ConfigError. */
export function loadConfig(env: EnvVars): ServiceConfig {
  let config = cache.get(env)
  if (!config) {
    config = parseConfig(env as EnvRecord)
    cache.set(env, config)
  }
  return config
}

/** Parses the configuration without caching; throws the first ConfigError. */
export function parseConfig(env: EnvRecord): ServiceConfig {
  const s = readSettings(env, SERVICE_SETTINGS)
  const model = modelConfigFromEnv(env)
  const demo = model.model === DEMO_MODEL
  const enabled = s.ENABLED_TOOLS.length
    ? s.ENABLED_TOOLS
    : [...DEFAULT_TOOLS, ...(demo ? DEMO_TOOLS : [])]
  // Built here, once, so a bad tool setting (http_get with no HTTP_ALLOWLIST) is a configuration
  // error at the first request, not a failure inside a run.
  const tools = buildToolset(enabled, env)
  const unknownConfirm = s.CONFIRM_ALLOWLIST.filter((name) => !enabled.includes(name))
  if (unknownConfirm.length) {
    throw new ConfigError(
      'CONFIRM_ALLOWLIST',
      `CONFIRM_ALLOWLIST names ${unknownConfirm.join(', ')}, not enabled tools; enabled: ${enabled.join(', ')}`,
    )
  }
  const policy: ConfirmPolicy =
    s.CONFIRM_POLICY === 'allowlist'
      ? { mode: 'allowlist', tools: s.CONFIRM_ALLOWLIST }
      : { mode: s.CONFIRM_POLICY }
  const { maxBudget, defaultBudget } = serverBudgets(s)
  if (
    maxBudget.maxCostUsd !== undefined &&
    model.pricePromptPer1kUsd === undefined &&
    model.priceCompletionPer1kUsd === undefined
  ) {
    throw new ConfigError(
      'MAX_COST_USD',
      'MAX_COST_USD needs PRICE_PROMPT_PER_1K_USD and/or PRICE_COMPLETION_PER_1K_USD: without prices no cost is known',
    )
  }
  requireModelKey(model)
  requireLongSecrets(env)
  const mcpServers = readMcpServers(env)
  checkMcpOAuthSettings(env, mcpServers)
  const enabledTools = tools.map((t) => t.name)
  // Last: an agent is checked against every other setting, once they are all valid.
  const { agents, leftOut: agentsLeftOut } = resolveAgentSet(s.ENABLED_AGENTS, {
    enabledTools,
    mcpServers,
    policy,
    maxBudget,
    defaultBudget,
    model,
  })
  return {
    policy,
    enabledTools,
    tools,
    mcpServers,
    agents,
    agentsLeftOut,
    delegateTools: delegateTools(agents, tools),
    maxDelegationDepth: s.MAX_DELEGATION_DEPTH,
    maxBudget,
    defaultBudget,
    slice: sliceForCpuMs(s.CPU_MS),
    model,
    callbackAllowlist: s.CALLBACK_ALLOWLIST,
    security: securityConfigFromEnv(env),
    slack: {
      apiUrl: s.SLACK_API_URL,
      approvers: s.SLACK_APPROVERS,
      forbidSelfApproval: s.SLACK_FORBID_SELF_APPROVAL,
      dmConversationMinutes: s.SLACK_DM_CONVERSATION_MINUTES,
      stream: s.SLACK_STREAM === 'auto',
      assistant: s.SLACK_ASSISTANT,
      approvalsChannel: s.SLACK_APPROVALS_CHANNEL,
    },
    eventStreams: eventStreamLimits(env),
    retentionMs: retentionMsFromEnv(env),
    otel: otelConfigFromEnv(env),
  }
}
