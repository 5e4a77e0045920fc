import {
  DEFAULT_BUDGET,
  DEFAULT_HISTORY_TOKENS,
  MAX_HISTORY_TOKENS,
  MIN_HISTORY_TOKENS,
  sliceForCpuMs,
  type Budget,
  type EdgeSlice,
} from '../kernel/budget'
import { CONFIRM_MODES, type ConfirmPolicy } from '../kernel/confirm'
import type { Tool } from '../kernel/tool'
import { DEMO_MODEL, type ModelConfig } from '../llm/create-model'
import { parseApprovers } from '../slack/approvers'
import { buildToolset } from '../../tools/catalog'
import { readMcpServers, type McpServerConfig } from '../../tools/mcp/index'
import type { EnvVars } from '../env-vars'
import { ConfigError } from '../errors/config-error'
import { modelConfigFromEnv, requireModelKey } from './model'
import { securityConfigFromEnv, type SecurityConfig } from './security'
import * as setting from '../settings/setting'
import { readSettings, type EnvRecord } from '../settings/setting'
import { LOG_LEVELS } from './log-level'
import { eventStreamLimits, type EventStreamLimits } from './event-streams'

/** Everything the service reads from its environment, validated once. */
export interface ServiceConfig {
  policy: ConfirmPolicy
  /** Names of the tools this deployment offers (ENABLED_TOOLS), in order. */
  enabledTools: string[]
  /** Those tools, built once from the catalog with their own settings. */
  tools: readonly Tool[]
  /** MCP servers whose tools runs may use (MCP_SERVERS); their lists are fetched per run. */
  mcpServers: McpServerConfig[]
  /** Server maxima: a run may ask for less, never more. */
  maxBudget: Budget
  /** Defaults for runs that ask for nothing. */
  defaultBudget: Budget
  slice: EdgeSlice
  model: ModelConfig
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
  }
  /** Open event streams and their queues (read again by the events route on its own). */
  eventStreams: EventStreamLimits
}

/** Tools enabled when ENABLED_TOOLS is unset: the ones that need no other setting. */
export const DEFAULT_TOOLS = ['calculator']

/** The demo's pretend incident tools: the default only with MODEL=demo (issue 14 §1). */
export const DEMO_TOOLS = ['query_metrics', 'search_logs', 'read_repo_file', 'rollback_deploy']

/**
 * The service's own settings. A new one is a line here (or, for a part with several, a file of
 * its own in src/config/ declaring them the same way) and a row in README "Configuration".
 */
const SERVICE_SETTINGS = {
  CONFIRM_POLICY: setting.oneOf(CONFIRM_MODES, 'ask'),
  CONFIRM_ALLOWLIST: setting.list(),
  ENABLED_TOOLS: setting.list(),
  MAX_STEPS: setting.number({ min: 1, max: 1000, integer: true, fallback: 50 }),
  MAX_SECONDS: setting.number({ min: 1, max: 86_400, integer: true, fallback: 900 }),
  MAX_PROMPT_TOKENS: setting.number({ min: 1, max: 1e8, integer: true, fallback: 500_000 }),
  MAX_COST_USD: setting.number({ min: 0 }),
  APPROVAL_TTL_SECONDS: setting.number({
    min: 1,
    max: 30 * 86_400,
    integer: true,
    fallback: 86_400,
  }),
  // The context cap every run gets (a run may ask for a smaller one, never a larger).
  MAX_CONTEXT_TOKENS: setting.number({ min: 1_000, integer: true, fallback: 32_000 }),
  MAX_PARALLEL_CALLS: setting.number({ min: 1, max: 64, integer: true, fallback: 8 }),
  // A follow-up run's history of earlier turns (a run may ask for less, never more).
  MAX_HISTORY_TOKENS: setting.number({
    min: MIN_HISTORY_TOKENS,
    max: MAX_HISTORY_TOKENS,
    integer: true,
    fallback: DEFAULT_HISTORY_TOKENS,
  }),
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
  const maxBudget: Budget = {
    ...DEFAULT_BUDGET,
    maxSteps: s.MAX_STEPS,
    maxSeconds: s.MAX_SECONDS,
    maxPromptTokens: s.MAX_PROMPT_TOKENS,
    approvalTtlSeconds: s.APPROVAL_TTL_SECONDS,
    maxContextTokens: s.MAX_CONTEXT_TOKENS,
    maxParallelCalls: s.MAX_PARALLEL_CALLS,
    maxHistoryTokens: s.MAX_HISTORY_TOKENS,
    ...(s.MAX_COST_USD !== undefined ? { maxCostUsd: s.MAX_COST_USD } : {}),
  }
  const defaultBudget: Budget = {
    ...DEFAULT_BUDGET,
    maxSteps: Math.min(DEFAULT_BUDGET.maxSteps, maxBudget.maxSteps),
    maxSeconds: Math.min(DEFAULT_BUDGET.maxSeconds, maxBudget.maxSeconds),
    maxPromptTokens: Math.min(DEFAULT_BUDGET.maxPromptTokens, maxBudget.maxPromptTokens),
    approvalTtlSeconds: maxBudget.approvalTtlSeconds,
    maxContextTokens: s.MAX_CONTEXT_TOKENS,
    maxParallelCalls: s.MAX_PARALLEL_CALLS,
    maxHistoryTokens: s.MAX_HISTORY_TOKENS,
    ...(maxBudget.maxCostUsd !== undefined ? { maxCostUsd: maxBudget.maxCostUsd } : {}),
  }
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
  return {
    policy,
    enabledTools: tools.map((t) => t.name),
    tools,
    mcpServers: readMcpServers(env),
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
    },
    eventStreams: eventStreamLimits(env),
  }
}
