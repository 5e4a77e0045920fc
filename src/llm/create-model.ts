/** The model settings (read by src/config/model.ts) and the model they make. */
import type { Model, Protocol } from '../kernel/model'
import { demoModel } from './demo-script'
import { OpenAIModel, type StreamMode } from './openai-model'
import { taskScriptModel } from './task-script'

export type ModelProtocolSetting = 'auto' | Protocol

export interface ModelConfig {
  baseURL: string
  /** The provider key; `none` for a provider that needs none. Not enumerable (never logged). */
  readonly apiKey?: string
  model: string
  temperature: number
  maxTokens?: number
  /** Models a run may choose; always contains `model`. */
  allowlist: string[]
  protocol: ModelProtocolSetting
  maxRetries: number
  /** Whether model calls stream (`MODEL_STREAM`). */
  stream: StreamMode
  /** USD per 1 000 prompt tokens, for cost estimates; absent when not configured. */
  pricePromptPer1kUsd?: number
  /** USD per 1 000 completion tokens; absent when not configured. */
  priceCompletionPer1kUsd?: number
  /** USD per 1 000 prompt tokens served from the provider's cache; unset: the prompt price. */
  priceCachedPromptPer1kUsd?: number
}

/** `MODEL=demo`: the offline scripted demo model, only when asked for by name. */
export const DEMO_MODEL = 'demo'
/** `MODEL=script`: each run follows the script its task spells out (docs/trying-tools.md). */
export const SCRIPT_MODEL = 'script'
/** The local models: no provider, no key, only when asked for by name. */
export const LOCAL_MODELS: readonly string[] = [DEMO_MODEL, SCRIPT_MODEL]
/** `OPENAI_API_KEY=none`: a provider that needs no key (local vLLM, Ollama); no Authorization. */
export const NO_KEY = 'none'

/**
 * The model for one run: the offline demo when the model is `demo`, the task's own script when
 * it is `script`, otherwise the OpenAI-compatible adapter. A per-run `model` must be in the allowlist.
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
  if (model === DEMO_MODEL) return demoModel()
  if (model === SCRIPT_MODEL) return taskScriptModel()
  if (!config.apiKey) {
    throw new TypeError(
      'OPENAI_API_KEY is not set: set the provider key, OPENAI_API_KEY=none for a provider that needs none, or MODEL=demo (or MODEL=script)',
    )
  }
  const keyless = config.apiKey === NO_KEY
  const send = opts.fetch
  // What `auto` learns of a provider (it does not stream) holds for the isolate, not one run.
  let learned = LEARNED.get(config.baseURL)
  if (!learned) LEARNED.set(config.baseURL, (learned = { streamRefused: false }))
  return new OpenAIModel(
    {
      baseURL: config.baseURL,
      apiKey: config.apiKey,
      // A keyless provider gets no `Authorization: Bearer none`.
      ...(keyless ? { fetch: withoutAuthorization(send) } : {}),
      model,
      temperature: config.temperature,
      maxTokens: config.maxTokens,
      maxRetries: config.maxRetries,
      stream: config.stream,
      ...(keyless ? {} : { fetch: send }),
    },
    learned,
  )
}

const LEARNED = new Map<string, { streamRefused: boolean }>()

function withoutAuthorization(send: typeof fetch | undefined): typeof fetch {
  return (input, init) => {
    const headers = new Headers(init?.headers)
    headers.delete('authorization')
    return (send ?? fetch)(input, { ...init, headers })
  }
}

/**
 * `gen_ai.provider.name` of a model setting: the local models are edgeloop's own scripted ones
 * (a custom value, as the OpenTelemetry conventions allow); every other model is reached through
 * an OpenAI-compatible provider.
 */
export function providerNameOf(model: string | undefined): string {
  if (model === DEMO_MODEL) return 'edgeloop.demo'
  if (model === SCRIPT_MODEL) return 'edgeloop.script'
  return 'openai'
}
