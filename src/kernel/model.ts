/** The only thing the kernel knows about models (docs/architecture.md#layers). */

export type Protocol = 'text' | 'native'

/** One chat message in the OpenAI chat-completions shape. */
export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string | null; tool_calls?: NativeToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string }

/** A tool call exactly as the chat-completions API carries it: arguments is a JSON string. */
export interface NativeToolCall {
  id: string
  type: 'function'
  function: { name: string; arguments: string }
}

/** A tool as the chat-completions `tools` array describes it. */
export interface ToolSchema {
  type: 'function'
  function: { name: string; description: string; parameters: Record<string, unknown> }
}

export interface ModelRequest {
  protocol: Protocol
  messages: ChatMessage[]
  /** Present for the native protocol only. */
  tools?: ToolSchema[]
  /** The run's agent's sampling temperature; absent: the model's configured one. */
  temperature?: number
  /** The call may not outlive this (the run's remaining wall budget). */
  timeoutMs: number
  signal?: AbortSignal
  /**
   * Told each piece of the reply's text as a streaming model receives it. Only a view for
   * watchers: the reply the kernel records is the whole response `complete` returns.
   */
  onText?: (delta: string) => void
}

export type FinishReason = 'stop' | 'tool_calls' | 'length' | 'content_filter'

export interface ModelUsage {
  promptTokens: number
  completionTokens: number
  /** Of `promptTokens`, those the provider served from its prompt cache, when it says. */
  cachedPromptTokens?: number
}

export interface ModelResponse {
  text?: string | null
  toolCalls?: NativeToolCall[]
  finishReason: FinishReason
  /** Real usage reported by the provider; absent when it reported none. */
  usage?: ModelUsage
  /** The model name that answered, when known. */
  model?: string
  /** The provider's id of this response (`chatcmpl-…`), when it gave one. */
  id?: string
}

export interface Model {
  /** Human-readable identity for the trace (provider/model). */
  readonly name: string
  /** Throws `ModelError` (or anything) when no answer could be had; the kernel ends the run. */
  complete(request: ModelRequest): Promise<ModelResponse>
}
