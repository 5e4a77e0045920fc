/** Model settings from the environment, checked once at startup, and the model they make. */
import type { Model, Protocol } from '../kernel/model'
import { demoModel } from './demo-script'
import { OpenAIModel } from './openai-model'

export type ModelProtocolSetting = 'auto' | Protocol

export interface ModelConfig {
  baseURL: string
  /** Absent → the offline scripted demo model. Not enumerable, so logging the config hides it. */
  readonly apiKey?: string
  model: string
  temperature: number
  maxTokens?: number
  /** Models a run may choose; always contains `model`. */
  allowlist: string[]
  protocol: ModelProtocolSetting
  maxRetries: number
  /** USD per 1 000 prompt tokens, for cost estimates; absent when not configured. */
  pricePromptPer1kUsd?: number
  /** USD per 1 000 completion tokens; absent when not configured. */
  priceCompletionPer1kUsd?: number
}

type Env = Record<string, string | undefined>

/** Reads and validates the model settings; throws a TypeError naming the bad variable. */
export function modelConfigFromEnv(env: Env): ModelConfig {
  const baseURL = read(env, 'OPENAI_BASE_URL') ?? 'https://api.openai.com/v1'
  if (!isHttpUrl(baseURL)) {
    throw new TypeError(
      `OPENAI_BASE_URL must be an http(s) URL such as https://api.openai.com/v1, got "${baseURL}"`,
    )
  }
  const model = read(env, 'MODEL') ?? 'gpt-4o-mini'
  const extra = (read(env, 'MODEL_ALLOWLIST') ?? '').split(',').map((name) => name.trim())
  const config: ModelConfig = {
    baseURL: baseURL.replace(/\/+$/, ''),
    model,
    temperature: number(env, 'MODEL_TEMPERATURE', { min: 0, max: 2 }) ?? 0,
    maxTokens: number(env, 'MODEL_MAX_TOKENS', { min: 1, integer: true }),
    allowlist: [...new Set([model, ...extra.filter(Boolean)])],
    protocol: protocol(env),
    maxRetries: number(env, 'MODEL_MAX_RETRIES', { min: 0, max: 10, integer: true }) ?? 3,
    pricePromptPer1kUsd: number(env, 'PRICE_PROMPT_PER_1K_USD', { min: 0 }),
    priceCompletionPer1kUsd: number(env, 'PRICE_COMPLETION_PER_1K_USD', { min: 0 }),
  }
  const apiKey = read(env, 'OPENAI_API_KEY')
  if (apiKey) Object.defineProperty(config, 'apiKey', { value: apiKey, enumerable: false })
  return config
}

/**
 * The model for one run: the OpenAI-compatible adapter when an API key is configured, otherwise
 * the offline demo. A per-run `model` must be in the allowlist.
 */
export function createModel(
  config: ModelConfig,
  opts: { model?: string; fetch?: typeof fetch } = {},
): Model {
  const model = opts.model ?? config.model
  if (!config.allowlist.includes(model)) {
    throw new TypeError(
      `model "${model}" is not allowed for runs; choose one of: ${config.allowlist.join(', ')} (set MODEL_ALLOWLIST to allow more)`,
    )
  }
  if (!config.apiKey) return demoModel()
  return new OpenAIModel({
    baseURL: config.baseURL,
    apiKey: config.apiKey,
    model,
    temperature: config.temperature,
    maxTokens: config.maxTokens,
    maxRetries: config.maxRetries,
    fetch: opts.fetch,
  })
}

/** A set variable, trimmed; empty counts as unset (wrangler vars are often ""). */
function read(env: Env, name: string): string | undefined {
  const value = env[name]?.trim()
  return value ? value : undefined
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value)
    return url.protocol === 'https:' || url.protocol === 'http:'
  } catch {
    return false
  }
}

function number(
  env: Env,
  name: string,
  rule: { min: number; max?: number; integer?: boolean },
): number | undefined {
  const raw = read(env, name)
  if (raw === undefined) return undefined
  const value = Number(raw)
  const ok =
    /^[+]?\d*\.?\d+(e[+-]?\d+)?$/i.test(raw) &&
    Number.isFinite(value) &&
    value >= rule.min &&
    (rule.max === undefined || value <= rule.max) &&
    (!rule.integer || Number.isInteger(value))
  if (ok) return value
  const kind = rule.integer ? 'an integer' : 'a number'
  const range = rule.max === undefined ? `>= ${rule.min}` : `from ${rule.min} to ${rule.max}`
  throw new TypeError(`${name} must be ${kind} ${range}, got "${raw}"`)
}

function protocol(env: Env): ModelProtocolSetting {
  const value = read(env, 'MODEL_PROTOCOL') ?? 'auto'
  if (value === 'auto' || value === 'native' || value === 'text') return value
  throw new TypeError(`MODEL_PROTOCOL must be one of auto, native, text, got "${value}"`)
}
