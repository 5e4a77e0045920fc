/** Builds one chat completion from its streamed chunks, as the non-streamed answer would be. */
import type { ChatCompletion, ChatCompletionChunk } from 'openai/resources/chat/completions'

interface CallParts {
  id: string
  name: string
  arguments: string
}

/**
 * Chunks in, one `ChatCompletion` out: text pieces joined, each tool call's id, name and argument
 * pieces gathered by its `index` (a piece may arrive in the same chunk as the next call's start),
 * the last finish reason, and the usage a final chunk without choices carries. Text is handed to
 * `onText` as it arrives.
 */
export class StreamAssembly {
  #text: string | null = null
  readonly #calls: CallParts[] = []
  #finish: string | null = null
  #usage: ChatCompletion['usage'] | undefined
  #id = ''
  #model = ''
  #created = 0
  #chunks = 0

  constructor(private readonly onText?: (delta: string) => void) {}

  add(chunk: ChatCompletionChunk): void {
    this.#chunks++
    this.#id ||= chunk.id ?? ''
    this.#model ||= chunk.model ?? ''
    this.#created ||= chunk.created ?? 0
    if (chunk.usage) this.#usage = chunk.usage
    const choice = chunk.choices?.find((c) => (c.index ?? 0) === 0)
    if (!choice) return
    const delta = choice.delta ?? {}
    if (typeof delta.content === 'string' && delta.content !== '') {
      this.#text = (this.#text ?? '') + delta.content
      this.onText?.(delta.content)
    } else if (delta.content === '' && this.#text === null) {
      this.#text = ''
    }
    for (const part of delta.tool_calls ?? []) {
      const call = (this.#calls[part.index] ??= { id: '', name: '', arguments: '' })
      if (part.id) call.id = part.id
      // Some servers send the name in pieces too; OpenAI sends it whole, once.
      if (part.function?.name) call.name += part.function.name
      if (part.function?.arguments) call.arguments += part.function.arguments
    }
    if (choice.finish_reason) this.#finish = choice.finish_reason
  }

  /** The completion the chunks make; undefined when no chunk came (a broken stream). */
  completion(): ChatCompletion | undefined {
    if (this.#chunks === 0) return undefined
    const tool_calls = this.#calls
      .filter((c) => c !== undefined)
      .map((c) => ({
        id: c.id,
        type: 'function' as const,
        function: { name: c.name, arguments: c.arguments },
      }))
    return {
      id: this.#id,
      object: 'chat.completion',
      created: this.#created,
      model: this.#model,
      choices: [
        {
          index: 0,
          logprobs: null,
          finish_reason: (this.#finish ?? 'stop') as ChatCompletion.Choice['finish_reason'],
          message: {
            role: 'assistant',
            content: this.#text,
            refusal: null,
            ...(tool_calls.length ? { tool_calls } : {}),
          },
        },
      ],
      ...(this.#usage ? { usage: this.#usage } : {}),
    }
  }

  /** Whether the stream ended with a finish reason (a stream cut short has none). */
  get finished(): boolean {
    return this.#finish !== null
  }
}
