/** The OpenAI-compatible chat-completions adapter (DESIGN §5): the wire, retries and redaction. */
import OpenAI from 'openai'
import type {
  ChatCompletion,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionMessageParam,
} from 'openai/resources/chat/completions'
import { ModelError } from '../kernel/errors'
import type {
  FinishReason,
  Model,
  ModelRequest,
  ModelResponse,
  NativeToolCall,
} from '../kernel/model'
import { describeFailure, isToolsUnsupported, type ProviderFailure } from './provider-failure'
import { redactSecrets } from './redact'
import { backoffDelayMs } from './retry-policy'

export interface OpenAIModelOptions {
  /** e.g. `https://api.openai.com/v1` or any OpenAI-compatible provider. */
  baseURL: string
  apiKey: string
  model: string
  /** Default 0: runs should be reproducible. */
  temperature?: number
  maxTokens?: number
  /** Retries after the first attempt, for 429, 5xx, network errors and timeouts. Default 3. */
  maxRetries?: number
  /** The longest one attempt may take (it never exceeds the request's remaining budget either). Default 120 000. */
  attemptTimeoutMs?: number
  fetch?: typeof fetch
  sleep?: (ms: number) => Promise<void>
  random?: () => number
  now?: () => number
}

const FINISH_REASONS: Record<string, FinishReason> = {
  stop: 'stop',
  tool_calls: 'tool_calls',
  function_call: 'tool_calls',
  length: 'length',
  content_filter: 'content_filter',
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

export class OpenAIModel implements Model {
  readonly name: string
  readonly #options: OpenAIModelOptions
  readonly #client: OpenAI

  constructor(options: OpenAIModelOptions) {
    this.#options = options
    this.name = `${new URL(options.baseURL).host}/${options.model}`
    this.#client = new OpenAI({
      baseURL: options.baseURL,
      apiKey: options.apiKey,
      // Retries are ours: Retry-After, jitter and the run's time budget are decided in complete().
      maxRetries: 0,
      // Late-bound so a fetch installed after construction (tests, instrumentation) is used.
      fetch: (input, init) => (options.fetch ?? fetch)(input, init),
    })
  }

  /** The same provider and settings with another model name (a per-run override). */
  withModel(model: string): OpenAIModel {
    return new OpenAIModel({ ...this.#options, model })
  }

  /** One chat completion within `request.timeoutMs`, retrying transient failures. */
  async complete(request: ModelRequest): Promise<ModelResponse> {
    const { maxRetries = 3, attemptTimeoutMs = 120_000, random = Math.random } = this.#options
    const now = this.#options.now ?? Date.now
    const sleep = this.#options.sleep ?? defaultSleep
    const deadline = now() + request.timeoutMs
    const body = this.#body(request)

    for (let attempt = 0; ; attempt++) {
      request.signal?.throwIfAborted()
      const remaining = deadline - now()
      if (remaining <= 0) {
        throw this.#error(`no answer within the time budget of ${request.timeoutMs} ms`, attempt, {
          code: 'timeout',
        })
      }
      const timeout = Math.max(1, Math.ceil(Math.min(remaining, attemptTimeoutMs)))
      const outcome = await this.#attempt(body, timeout, request.signal, now)
      if ('completion' in outcome) return this.#response(outcome.completion)
      const failure = outcome.failure
      const attempts = attempt + 1
      if (request.protocol === 'native' && isToolsUnsupported(failure)) {
        throw this.#failureError(failure, attempts, 'tools_unsupported')
      }
      if (!failure.retryable || attempt >= maxRetries) throw this.#failureError(failure, attempts)
      const delay = failure.retryAfterMs ?? backoffDelayMs(attempt, random)
      const left = deadline - now()
      if (delay >= left) {
        // Sleeping past the budget would only end in a timeout; report the real cause now.
        throw this.#failureError(
          failure,
          attempts,
          undefined,
          `retry in ${Math.ceil(delay)} ms would exceed the remaining ${Math.max(0, Math.floor(left))} ms`,
        )
      }
      await sleepUnlessAborted(sleep, delay, request.signal)
    }
  }

  /** One HTTP attempt; a failure comes back as data so the retry loop can decide. */
  async #attempt(
    body: ChatCompletionCreateParamsNonStreaming,
    timeout: number,
    signal: AbortSignal | undefined,
    now: () => number,
  ): Promise<{ completion: ChatCompletion } | { failure: ProviderFailure }> {
    try {
      const completion = await this.#client.chat.completions.create(body, {
        timeout,
        maxRetries: 0,
        signal,
      })
      return { completion }
    } catch (err) {
      // A cancelled run surfaces as the caller's own abort reason, not as a provider failure.
      signal?.throwIfAborted()
      const failure = describeFailure(err, now())
      if (failure.kind === 'timeout') failure.message = `no answer within ${timeout} ms`
      return { failure }
    }
  }

  #body(request: ModelRequest): ChatCompletionCreateParamsNonStreaming {
    const { model, temperature = 0, maxTokens } = this.#options
    const body: ChatCompletionCreateParamsNonStreaming = {
      model,
      messages: request.messages as ChatCompletionMessageParam[],
      temperature,
    }
    if (maxTokens !== undefined) body.max_tokens = maxTokens
    if (request.protocol === 'native' && request.tools?.length) {
      body.tools = request.tools
      body.tool_choice = 'auto'
    }
    return body
  }

  #response(completion: ChatCompletion): ModelResponse {
    const choice = completion.choices?.[0]
    if (!choice?.message) {
      throw this.#error('the provider answered without choices', 1, { code: 'bad_response' })
    }
    const message = choice.message
    const toolCalls: NativeToolCall[] = (message.tool_calls ?? []).flatMap((call) =>
      call.type === 'function'
        ? [
            {
              id: call.id,
              type: 'function' as const,
              function: { name: call.function.name, arguments: call.function.arguments },
            },
          ]
        : [],
    )
    const response: ModelResponse = {
      text: message.content ?? null,
      finishReason: FINISH_REASONS[choice.finish_reason ?? ''] ?? 'stop',
      model: completion.model,
    }
    if (toolCalls.length) response.toolCalls = toolCalls
    if (completion.usage) {
      response.usage = {
        promptTokens: completion.usage.prompt_tokens,
        completionTokens: completion.usage.completion_tokens,
      }
    }
    return response
  }

  #failureError(
    failure: ProviderFailure,
    attempts: number,
    code?: 'tools_unsupported',
    note?: string,
  ): ModelError {
    const status =
      failure.kind === 'http'
        ? `${failure.status}${failure.providerCode ? ` ${failure.providerCode}` : ''}: `
        : ''
    const what =
      failure.kind === 'http' ? `provider answered ${status}${failure.message}` : failure.message
    const hint =
      code === 'tools_unsupported'
        ? 'use MODEL_PROTOCOL=text for this model'
        : (note ?? nextStep(failure))
    return this.#error(hint ? `${what} (${hint})` : what, attempts, {
      status: failure.status,
      code: code ?? failure.kind,
    })
  }

  #error(message: string, attempts: number, options: ModelError['options']): ModelError {
    const tries = attempts > 1 ? `, after ${attempts} attempts` : ''
    const text = `model call to ${this.name} failed${tries}: ${message}`
    return new ModelError(redactSecrets(text, this.#options.apiKey), options)
  }
}

/** What an operator should do about a final failure. */
function nextStep(failure: ProviderFailure): string | undefined {
  if (failure.kind === 'timeout')
    return 'the run has no time left for this step; raise its time budget'
  if (failure.kind === 'network') return 'check OPENAI_BASE_URL and that the provider is reachable'
  if (failure.kind === 'bad_response') return 'the provider may not be OpenAI-compatible'
  const status = failure.status ?? 0
  if (status === 401 || status === 403) return 'check OPENAI_API_KEY'
  if (status === 404) return 'check MODEL and OPENAI_BASE_URL'
  if (status === 429) return 'the provider is rate-limiting; retry later'
  if (status >= 500) return 'the provider is failing; retry later'
  return undefined
}

/** Sleeps, waking early (and throwing the abort reason) when the run is cancelled. */
async function sleepUnlessAborted(
  sleep: (ms: number) => Promise<void>,
  ms: number,
  signal: AbortSignal | undefined,
): Promise<void> {
  if (!signal) return sleep(ms)
  let onAbort: () => void = () => {}
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason)
    signal.addEventListener('abort', onAbort, { once: true })
  })
  try {
    await Promise.race([sleep(ms), aborted])
  } finally {
    signal.removeEventListener('abort', onAbort)
  }
}
