import { CONFIRM_MODES, type ConfirmMode, type ConfirmPolicy } from './kernel/confirm'
import { DEFAULT_BUDGET, sliceForCpuMs, type Budget, type EdgeSlice } from './kernel/budget'
import { modelConfigFromEnv, type ModelConfig } from './llm/config'
import { buildToolset, KNOWN_TOOLS, parseToolList } from '../tools/index'
import type { EnvVars } from './env-vars'
import { parseApprovers } from './slack/approvers'

/** Everything the service reads from its environment, validated once. */
export interface ServiceConfig {
  policy: ConfirmPolicy
  enabledTools: string[]
  httpAllowlist: string[]
  httpPostIdempotent: boolean
  /** Server maxima: a run may ask for less, never more. */
  maxBudget: Budget
  /** Defaults for runs that ask for nothing. */
  defaultBudget: Budget
  slice: EdgeSlice
  model: ModelConfig
  /** Hosts a run's callback_url may point to; empty = any https host. */
  callbackAllowlist: string[]
  slack: {
    apiUrl: string
    approvers: string[]
    forbidSelfApproval: boolean
  }
}

/** Thrown for a bad setting; the message names the variable and what is allowed. */
export class ConfigError extends Error {
  override name = 'ConfigError'
}

/** Tools enabled when ENABLED_TOOLS is unset: the ones that need no other setting. */
export const DEFAULT_TOOLS = [
  'calculator',
  'query_metrics',
  'search_logs',
  'read_repo_file',
  'rollback_deploy',
]

const cache = new WeakMap<object, ServiceConfig>()

/** Parses and caches the configuration for this env object. Throws ConfigError. */
export function loadConfig(env: EnvVars): ServiceConfig {
  let config = cache.get(env)
  if (!config) {
    config = parseConfig(env)
    cache.set(env, config)
  }
  return config
}

function parseConfig(env: EnvVars): ServiceConfig {
  const mode = (env.CONFIRM_POLICY ?? 'ask').trim() as ConfirmMode
  if (!CONFIRM_MODES.includes(mode)) {
    throw new ConfigError(
      `CONFIRM_POLICY must be one of ${CONFIRM_MODES.join(', ')}; got "${mode}"`,
    )
  }
  const enabledTools = parseToolList(env.ENABLED_TOOLS ?? DEFAULT_TOOLS.join(','))
  const unknown = enabledTools.filter((t) => !KNOWN_TOOLS.includes(t))
  if (unknown.length) {
    throw new ConfigError(
      `ENABLED_TOOLS names unknown tools ${unknown.join(', ')}; known: ${KNOWN_TOOLS.join(', ')}`,
    )
  }
  const httpAllowlist = parseToolList(env.HTTP_ALLOWLIST)
  const httpPostIdempotent = bool(env, 'HTTP_POST_IDEMPOTENT')
  try {
    // Build once here so a bad tool setting (e.g. http_get with no HTTP_ALLOWLIST) is a
    // configuration error at the first request, not a failure inside a run.
    buildToolset({ enabled: enabledTools, httpAllowlist, httpPostIdempotent })
  } catch (err) {
    throw new ConfigError(`ENABLED_TOOLS / HTTP_ALLOWLIST: ${(err as Error).message}`)
  }
  const policy: ConfirmPolicy =
    mode === 'allowlist' ? { mode, tools: parseToolList(env.CONFIRM_ALLOWLIST) } : { mode }
  const maxBudget: Budget = {
    ...DEFAULT_BUDGET,
    maxSteps: int(env, 'MAX_STEPS', 50, 1, 1000),
    maxSeconds: int(env, 'MAX_SECONDS', 900, 1, 86_400),
    maxPromptTokens: int(env, 'MAX_PROMPT_TOKENS', 500_000, 1, 100_000_000),
    approvalTtlSeconds: int(env, 'APPROVAL_TTL_SECONDS', 24 * 3600, 1, 30 * 86_400),
    ...(env.MAX_COST_USD ? { maxCostUsd: num(env, 'MAX_COST_USD', 0, Infinity) } : {}),
  }
  const defaultBudget: Budget = {
    ...DEFAULT_BUDGET,
    maxSteps: Math.min(DEFAULT_BUDGET.maxSteps, maxBudget.maxSteps),
    maxSeconds: Math.min(DEFAULT_BUDGET.maxSeconds, maxBudget.maxSeconds),
    maxPromptTokens: Math.min(DEFAULT_BUDGET.maxPromptTokens, maxBudget.maxPromptTokens),
    approvalTtlSeconds: maxBudget.approvalTtlSeconds,
    ...(maxBudget.maxCostUsd !== undefined ? { maxCostUsd: maxBudget.maxCostUsd } : {}),
  }
  let model: ModelConfig
  try {
    model = modelConfigFromEnv(env as unknown as Record<string, string | undefined>)
  } catch (err) {
    throw new ConfigError((err as Error).message)
  }
  if (
    maxBudget.maxCostUsd !== undefined &&
    model.pricePromptPer1kUsd === undefined &&
    model.priceCompletionPer1kUsd === undefined
  ) {
    throw new ConfigError(
      'MAX_COST_USD needs PRICE_PROMPT_PER_1K_USD and/or PRICE_COMPLETION_PER_1K_USD: without prices no cost is known',
    )
  }
  const apiUrl = env.SLACK_API_URL?.trim() || 'https://slack.com/api'
  if (!/^https?:\/\//.test(apiUrl))
    throw new ConfigError(`SLACK_API_URL must be an http(s) URL; got "${apiUrl}"`)
  let approvers: string[]
  try {
    approvers = parseApprovers(env.SLACK_APPROVERS)
  } catch (err) {
    throw new ConfigError((err as Error).message)
  }
  return {
    policy,
    enabledTools,
    httpAllowlist,
    httpPostIdempotent,
    maxBudget,
    defaultBudget,
    slice: sliceForCpuMs(int(env, 'CPU_MS', 30_000, 1_000, 300_000)),
    model,
    callbackAllowlist: parseToolList(env.CALLBACK_ALLOWLIST),
    slack: {
      apiUrl: apiUrl.replace(/\/+$/, ''),
      approvers,
      forbidSelfApproval: bool(env, 'SLACK_FORBID_SELF_APPROVAL'),
    },
  }
}

function raw(env: EnvVars, name: keyof EnvVars): string | undefined {
  const v = env[name]
  return typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined
}

function num(env: EnvVars, name: keyof EnvVars, min: number, max: number): number {
  const v = raw(env, name)!
  const n = Number(v)
  if (!Number.isFinite(n) || n < min || n > max) {
    throw new ConfigError(`${name} must be a number from ${min} to ${max}; got "${v}"`)
  }
  return n
}

function int(
  env: EnvVars,
  name: keyof EnvVars,
  fallback: number,
  min: number,
  max: number,
): number {
  const v = raw(env, name)
  if (v === undefined) return fallback
  const n = Number(v)
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max}; got "${v}"`)
  }
  return n
}

function bool(env: EnvVars, name: keyof EnvVars): boolean {
  const v = raw(env, name)
  if (v === undefined) return false
  if (/^(1|true|yes)$/i.test(v)) return true
  if (/^(0|false|no)$/i.test(v)) return false
  throw new ConfigError(`${name} must be true or false; got "${v}"`)
}
