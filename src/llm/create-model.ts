/** The model settings (read by src/config/model.ts) and the model they make. */
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
  /** USD per 1 000 prompt tokens served from the provider's cache; unset: the prompt price. */
  priceCachedPromptPer1kUsd?: number
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
