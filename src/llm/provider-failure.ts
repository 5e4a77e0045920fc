/** Turns whatever the `openai` client threw into one plain description we can retry or report. */
import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai'
import { runtimeReference } from '../errors/runtime-reference'

export interface ProviderFailure {
  kind: 'http' | 'timeout' | 'network' | 'bad_response'
  /** HTTP status, for `http`. */
  status?: number
  /** The provider's own error code (`rate_limit_exceeded`, `model_not_found`, …). */
  providerCode?: string
  /** The parameter the provider complained about, when it said. */
  param?: string
  /** The provider's message (not yet redacted). */
  message: string
  /**
   * For `network`: the reference workerd gave a failure it reports only as `internal error`
   * (a host that does not resolve, for one); its log line with `wdErrId = <reference>` says why.
   */
  runtimeReference?: string
}

/** Classifies an error thrown by `client.chat.completions.create` (after its own retries). */
export function describeFailure(err: unknown): ProviderFailure {
  if (err instanceof APIConnectionTimeoutError) {
    return { kind: 'timeout', message: 'the request timed out' }
  }
  if (err instanceof APIUserAbortError) {
    return { kind: 'network', message: 'the request was aborted' }
  }
  if (err instanceof APIConnectionError) {
    // The client's own message is only `Connection error.`; what fetch threw says what failed.
    const cause = err.cause instanceof Error ? err.cause.message : undefined
    if (!cause) return { kind: 'network', message: err.message }
    const failure: ProviderFailure = { kind: 'network', message: `could not connect: ${cause}` }
    const reference = runtimeReference(cause)
    if (reference) failure.runtimeReference = reference
    return failure
  }
  if (err instanceof APIError && typeof err.status === 'number') {
    const body = err.error as { message?: unknown } | undefined
    const message = typeof body?.message === 'string' ? body.message : err.message
    return {
      kind: 'http',
      status: err.status,
      providerCode: typeof err.code === 'string' ? err.code : undefined,
      param: typeof err.param === 'string' ? err.param : undefined,
      message,
    }
  }
  const message = err instanceof Error ? err.message : String(err)
  return { kind: 'bad_response', message }
}

// Real answers from providers that cannot do function calling, e.g. Ollama "llama2 does not
// support tools", OpenRouter "No endpoints found that support tool use", vLLM "\"auto\" tool
// choice requires --enable-auto-tool-choice", OpenAI "'tools' is not supported with this model".
const TOOLS_UNSUPPORTED = [
  /\b(does not|doesn't|do not|don't|not) support (tools|tool use|tool calls|tool calling|function calling|functions)\b/i,
  /\b(tools|tool_choice|tool use|tool calling|tool calls|function calling|functions)'?\s+(is|are)\s+(not supported|unsupported|not enabled|not available|disabled)\b/i,
  /\bthat supports? tool use\b/i,
  /enable-auto-tool-choice/i,
]

/** True when a failed native-protocol call says the model/provider cannot take `tools`. */
export function isToolsUnsupported(failure: ProviderFailure): boolean {
  if (failure.kind !== 'http' || ![400, 404, 422].includes(failure.status ?? 0)) return false
  if (
    failure.providerCode === 'unsupported_parameter' &&
    ['tools', 'tool_choice', 'functions'].includes(failure.param ?? '')
  ) {
    return true
  }
  return TOOLS_UNSUPPORTED.some((pattern) => pattern.test(failure.message))
}

// What providers and proxies without streaming answer: "Streaming is not supported", "stream is
// not supported for this model", "'stream' is not supported", "does not support streaming".
const STREAM_UNSUPPORTED = [
  /\b(does not|doesn't|do not|don't|not|cannot|can't) (support )?stream(ing)?\b/i,
  /\bstream(ing|_options)?'?\s+(is|are)\s+(not supported|unsupported|not enabled|not available|disabled)\b/i,
]

/** True when a failed call says the provider cannot stream (then `auto` asks again without). */
export function isStreamUnsupported(failure: ProviderFailure): boolean {
  if (failure.kind !== 'http' || ![400, 404, 422, 501].includes(failure.status ?? 0)) return false
  if (
    failure.providerCode === 'unsupported_parameter' &&
    ['stream', 'stream_options'].includes(failure.param ?? '')
  ) {
    return true
  }
  return STREAM_UNSUPPORTED.some((pattern) => pattern.test(failure.message))
}
