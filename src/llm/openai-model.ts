/** The OpenAI-compatible chat-completions adapter (docs/architecture.md#layers): the wire, the budget and redaction. */
import OpenAI from 'openai'
import type { ClientOptions } from 'openai'
import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionMessageParam,
} from 'openai/resources/chat/completions'
import { ModelError } from '../errors/model-error'
import { runtimeReferenceHint } from '../errors/runtime-reference'
import type {
  FinishReason,
  Model,
  ModelRequest,
  ModelResponse,
  NativeToolCall,
} from '../kernel/model'
import {
  describeFailure,
  isStreamUnsupported,
  isToolsUnsupported,
  type ProviderFailure,
} from './provider-failure'
import { createRedactor, type Redactor } from '../security/redactor'
import { clientRetries, clientWaitMs } from './retry-policy'
import { StreamAssembly } from './stream-assembly'

/**
 * `auto`: stream, and on a provider error that says it cannot, ask again without and stop
 * asking this provider to stream; `on`: always stream (that error is the call's failure);
 * `off`: never.
 */
export type StreamMode = 'auto' | 'on' | 'off'

export interface OpenAIModelOptions {
  /** e.g. `https://api.openai.com/v1` or any OpenAI-compatible provider. */
  baseURL: string
  apiKey: string
  model: string
  /** Default 0: runs should be reproducible. */
  temperature?: number
  maxTokens?: number
  /** The client's retries after the first attempt (429, 5xx, network errors, timeouts). Default 3. */
  maxRetries?: number
  /** The longest one attempt may take (it never exceeds the request's remaining budget either). Default 120 000. */
  attemptTimeoutMs?: number
  fetch?: typeof fetch
  now?: () => number
  /** Default `auto`. */
  stream?: StreamMode
}

const FINISH_REASONS: Record<string, FinishReason> = {
  stop: 'stop',
  tool_calls: 'tool_calls',
  function_call: 'tool_calls',
  length: 'length',
  content_filter: 'content_filter',
}

/**
 * One `complete()` call as the `openai` client's fetch sees it: how many attempts it made, and
 * whether a retry was refused because its wait would outlast the time budget.
 */
interface CallBudget {
  readonly deadline: number
  attempts: number
  refused?: string
  /** The fetch this call goes through (looked up per call: tests and instrumentation swap it). */
  readonly send: typeof fetch
  readonly now: () => number
}

/**
 * The call a request belongs to rides in its `fetchOptions` under this key (the client copies
 * them into every attempt's init), so one client serves every call: constructing an `OpenAI`
 * client per call was about 3% of a two-call run's Worker CPU (bench/service-cost.mjs).
 */
const CALL = Symbol('edgeloop.call')

type MergedRequestInit = NonNullable<ClientOptions['fetchOptions']>

/** One client per provider and key in the isolate (a handful at most: the models configured). */
const CLIENTS = new Map<string, OpenAI>()
const MAX_CLIENTS = 16

function clientFor(baseURL: string, apiKey: string): OpenAI {
  const key = `${baseURL}\u0000${apiKey}`
  let client = CLIENTS.get(key)
  if (!client) {
    if (CLIENTS.size >= MAX_CLIENTS) CLIENTS.clear()
    client = new OpenAI({ baseURL, apiKey, fetch: budgetedFetch })
    CLIENTS.set(key, client)
  }
  return client
}

/** The client's fetch: counts the call's attempts and vetoes retries its budget can't pay. */
async function budgetedFetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  const { [CALL]: call, ...rest } = init as RequestInit & { [CALL]: CallBudget }
  call.attempts++
  // Called unbound: workerd's fetch refuses any `this` but the global one.
  const send = call.send
  const res = await send(input, rest)
  if (res.ok || !clientRetries(res)) return res
  const wait = clientWaitMs(res.headers, call.attempts - 1, call.now())
  const left = call.deadline - call.now()
  if (wait < left) return res
  // The client would sleep past the budget and then give up: it should give up now, with
  // the provider's own error. `x-should-retry: false` is the client's documented veto.
  call.refused = `retry in ${Math.ceil(wait)} ms would exceed the remaining ${Math.max(0, Math.floor(left))} ms`
  const headers = new Headers(res.headers)
  headers.set('x-should-retry', 'false')
  return new Response(res.body, { status: res.status, statusText: res.statusText, headers })
}

export class OpenAIModel implements Model {
  readonly name: string
  readonly #options: OpenAIModelOptions
  /** Its own key and key-shaped strings out of every error it makes. */
  #redact: Redactor | undefined
  /** Shared with `withModel` copies: `auto` learned that this provider does not stream. */
  readonly #learned: { streamRefused: boolean }

  constructor(options: OpenAIModelOptions, learned = { streamRefused: false }) {
    this.#options = options
    this.#learned = learned
    this.name = `${new URL(options.baseURL).host}/${options.model}`
  }

  /** The same provider and settings with another model name (a per-run override). */
  withModel(model: string): OpenAIModel {
    return new OpenAIModel({ ...this.#options, model }, this.#learned)
  }

  /** Whether the next call asks the provider to stream. */
  get streaming(): boolean {
    const mode = this.#options.stream ?? 'auto'
    return mode === 'on' || (mode === 'auto' && !this.#learned.streamRefused)
  }

  /**
   * One chat completion within `request.timeoutMs`. The `openai` client retries transient
   * failures itself (backoff, `Retry-After` / `retry-after-ms`, a timeout per attempt); this
   * bounds it by the budget: a signal that fires when the budget is spent (the client then sends
   * nothing more), no retry whose wait would outlast the budget, and a cancel that wakes a wait.
   */
  async complete(request: ModelRequest): Promise<ModelResponse> {
    const { maxRetries = 3, attemptTimeoutMs = 120_000 } = this.#options
    const now = this.#options.now ?? Date.now
    request.signal?.throwIfAborted()
    const budgetMs = request.timeoutMs
    const call: CallBudget = {
      deadline: now() + budgetMs,
      attempts: 0,
      // Looked up at call time, so a fetch installed later (tests, instrumentation) is used.
      send: this.#options.fetch ?? fetch,
      now,
    }
    const timeout = Math.max(1, Math.ceil(Math.min(budgetMs, attemptTimeoutMs)))
    const budget = new AbortController()
    // setTimeout, not AbortSignal.timeout: one clock with the client's own timers.
    const timer = setTimeout(() => budget.abort(), Math.max(0, budgetMs))
    const signal = request.signal ? AbortSignal.any([request.signal, budget.signal]) : budget.signal
    const options = {
      maxRetries,
      timeout,
      signal,
      fetchOptions: { [CALL]: call } as MergedRequestInit,
    }
    try {
      let completion: ChatCompletion
      if (!this.streaming) {
        const body = this.#body(request)
        completion = await settleOrAbort(
          this.#client().chat.completions.create(body, options),
          signal,
        )
      } else {
        try {
          completion = await settleOrAbort(this.#streamed(request, options), signal)
        } catch (err) {
          if (signal.aborted || (this.#options.stream ?? 'auto') !== 'auto') throw err
          if (!isStreamUnsupported(describeFailure(err))) throw err
          // The same request once more, whole; and no more streaming asked of this provider.
          this.#learned.streamRefused = true
          const body = this.#body(request)
          completion = await settleOrAbort(
            this.#client().chat.completions.create(body, options),
            signal,
          )
        }
      }
      return this.#response(completion)
    } catch (err) {
      // A cancelled run surfaces as the caller's own abort reason, not as a provider failure.
      request.signal?.throwIfAborted()
      if (budget.signal.aborted) {
        throw this.#error(`no answer within the time budget of ${budgetMs} ms`, call.attempts, {
          code: 'timeout',
        })
      }
      const failure: ProviderFailure =
        err instanceof StreamCutOff
          ? { kind: 'network', message: err.message }
          : describeFailure(err)
      if (failure.kind === 'timeout') failure.message = `no answer within ${timeout} ms`
      if (request.protocol === 'native' && isToolsUnsupported(failure)) {
        throw this.#failureError(failure, call.attempts, 'tools_unsupported')
      }
      throw this.#failureError(failure, call.attempts, undefined, call.refused)
    } finally {
      clearTimeout(timer)
    }
  }

  /**
   * The completion streamed: `stream: true` with usage in the last chunk, assembled as it comes,
   * its text handed to `request.onText`. A provider that ignores `stream` and answers JSON is
   * read as it answered. A stream that ends without a finish reason was cut off: a failure, never
   * a half reply.
   */
  async #streamed(
    request: ModelRequest,
    options: {
      maxRetries: number
      timeout: number
      signal: AbortSignal
      fetchOptions: MergedRequestInit
    },
  ): Promise<ChatCompletion> {
    const body = {
      ...this.#body(request),
      stream: true as const,
      stream_options: { include_usage: true },
    }
    const { data, response } = await this.#client()
      .chat.completions.create(body, options)
      .withResponse()
    if (!(response.headers.get('content-type') ?? '').includes('text/event-stream')) {
      return (await response.json()) as ChatCompletion
    }
    const assembly = new StreamAssembly(request.onText)
    for await (const chunk of data as AsyncIterable<ChatCompletionChunk>) assembly.add(chunk)
    const completion = assembly.completion()
    if (!completion || !assembly.finished) {
      throw new StreamCutOff('the streamed answer ended before its finish reason')
    }
    return completion
  }

  /** The provider's client (shared by every call, see CALL). */
  #client(): OpenAI {
    return clientFor(this.#options.baseURL, this.#options.apiKey)
  }

  #body(request: ModelRequest): ChatCompletionCreateParamsNonStreaming {
    const { model, temperature = 0, maxTokens } = this.#options
    const body: ChatCompletionCreateParamsNonStreaming = {
      model,
      messages: request.messages as ChatCompletionMessageParam[],
      // An agent's temperature (the run's snapshot) over the deployment's MODEL_TEMPERATURE.
      temperature: request.temperature ?? temperature,
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
    if (completion.id) response.id = completion.id
    if (toolCalls.length) response.toolCalls = toolCalls
    if (completion.usage) {
      response.usage = {
        promptTokens: completion.usage.prompt_tokens,
        completionTokens: completion.usage.completion_tokens,
      }
      const cached = completion.usage.prompt_tokens_details?.cached_tokens
      if (typeof cached === 'number') response.usage.cachedPromptTokens = cached
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
    // No `cause`: provider errors may echo the API key, and only this message is redacted.
    this.#redact ??= createRedactor(this.#options.apiKey ? [this.#options.apiKey] : [])
    return new ModelError(this.#redact(text), options)
  }
}

/** A stream that ended early: reported like a connection that broke. */
class StreamCutOff extends Error {}

/** What an operator should do about a final failure. */
function nextStep(failure: ProviderFailure): string | undefined {
  if (failure.kind === 'timeout')
    return 'the run has no time left for this step; raise its time budget'
  if (failure.kind === 'network') {
    const reachable = 'check OPENAI_BASE_URL and that the provider is reachable'
    if (!failure.runtimeReference) return reachable
    return `${runtimeReferenceHint(failure.runtimeReference)}; ${reachable}`
  }
  if (failure.kind === 'bad_response') return 'the provider may not be OpenAI-compatible'
  const status = failure.status ?? 0
  if (status === 401 || status === 403) return 'check OPENAI_API_KEY'
  if (status === 404) return 'check MODEL and OPENAI_BASE_URL'
  if (status === 429) return 'the provider is rate-limiting; retry later'
  if (status >= 500) return 'the provider is failing; retry later'
  return undefined
}

/**
 * The client's promise, or the abort reason as soon as `signal` fires: the client's wait between
 * retries does not watch the signal (it checks it only before the next attempt).
 */
async function settleOrAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  // Whatever the client settles with after an abort is of no interest; never unhandled.
  promise.catch(() => {})
  let onAbort: () => void = () => {}
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason)
    if (signal.aborted) onAbort()
    else signal.addEventListener('abort', onAbort, { once: true })
  })
  try {
    return await Promise.race([promise, aborted])
  } finally {
    signal.removeEventListener('abort', onAbort)
  }
}
