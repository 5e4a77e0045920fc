/** The model settings: provider, model names, protocol, retries and prices. */
import {
  DEMO_MODEL,
  LOCAL_MODELS,
  NO_KEY,
  SCRIPT_MODEL,
  type ModelConfig,
} from '../llm/create-model'
import { ConfigError } from '../errors/config-error'
import * as setting from '../settings/setting'
import { readSettings, type EnvRecord } from '../settings/setting'

const MODEL_SETTINGS = {
  OPENAI_BASE_URL: setting.httpUrl('https://api.openai.com/v1'),
  OPENAI_API_KEY: setting.text(),
  MODEL: setting.text('gpt-4o-mini'),
  MODEL_ALLOWLIST: setting.list(),
  MODEL_TEMPERATURE: setting.number({ min: 0, max: 2, fallback: 0 }),
  MODEL_MAX_TOKENS: setting.number({ min: 1, integer: true }),
  MODEL_PROTOCOL: setting.oneOf(['auto', 'native', 'text'], 'auto'),
  MODEL_MAX_RETRIES: setting.number({ min: 0, max: 10, integer: true, fallback: 3 }),
  MODEL_STREAM: setting.oneOf(['auto', 'on', 'off'], 'auto'),
  PRICE_PROMPT_PER_1K_USD: setting.number({ min: 0 }),
  PRICE_COMPLETION_PER_1K_USD: setting.number({ min: 0 }),
  PRICE_CACHED_PROMPT_PER_1K_USD: setting.number({ min: 0 }),
}

/** Reads and validates the model settings; throws a ConfigError naming the bad variable. */
export function modelConfigFromEnv(env: EnvRecord): ModelConfig {
  const s = readSettings(env, MODEL_SETTINGS)
  const config: ModelConfig = {
    baseURL: s.OPENAI_BASE_URL,
    model: s.MODEL,
    temperature: s.MODEL_TEMPERATURE,
    maxTokens: s.MODEL_MAX_TOKENS,
    allowlist: [...new Set([s.MODEL, ...s.MODEL_ALLOWLIST])],
    protocol: s.MODEL_PROTOCOL,
    maxRetries: s.MODEL_MAX_RETRIES,
    stream: s.MODEL_STREAM,
    pricePromptPer1kUsd: s.PRICE_PROMPT_PER_1K_USD,
    priceCompletionPer1kUsd: s.PRICE_COMPLETION_PER_1K_USD,
    priceCachedPromptPer1kUsd: s.PRICE_CACHED_PROMPT_PER_1K_USD,
  }
  // Not enumerable, so logging or serializing the config never shows the key.
  if (s.OPENAI_API_KEY) {
    Object.defineProperty(config, 'apiKey', { value: s.OPENAI_API_KEY, enumerable: false })
  }
  return config
}

/**
 * The local models (the demo, the task script) run only when asked for by name; any other model
 * needs a key (or `none`). Checked
 * last by the loader, so a more specific problem is named first.
 */
export function requireModelKey(config: ModelConfig): void {
  if (LOCAL_MODELS.includes(config.model) || config.apiKey) return
  throw new ConfigError(
    'OPENAI_API_KEY',
    `OPENAI_API_KEY is not set, so model "${config.model}" cannot be called: set the provider's key, ` +
      `OPENAI_API_KEY=${NO_KEY} for a provider that needs none (local vLLM, Ollama), or ` +
      `MODEL=${DEMO_MODEL} for the offline demo (MODEL=${SCRIPT_MODEL} to script runs in their task)`,
  )
}
