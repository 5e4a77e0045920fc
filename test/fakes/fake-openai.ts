/**
 * A fake OpenAI-compatible chat-completions endpoint, strict like the real API.
 *
 *   const api = new FakeOpenAI({ apiKey: 'sk-test-key' })
 *   api.enqueue(reply.toolCalls([{ name: 'calc', arguments: { x: 1 } }]), reply.text('done'))
 *   outbound = new Outbound().on('api.openai.test', api.handler).install()
 *   // point the model at baseURL 'https://api.openai.test/v1'
 *
 * Every request is checked the way the real API checks it (route, bearer key, body shape,
 * tool_call_id pairing, tools shape); a wrong one gets the OpenAI-shaped 4xx error the real API
 * would send, and is listed in `violations`. A valid one consumes the next scripted reply. With no
 * reply left it answers 400 `fake_exhausted` (not retryable, so the test fails fast).
 */
import type { FakeHandler } from './outbound'

export const FAKE_OPENAI_HOST = 'api.openai.test'
export const FAKE_OPENAI_BASE_URL = `https://${FAKE_OPENAI_HOST}/v1`
export const FAKE_OPENAI_KEY = 'sk-test-fake-openai-0123456789'

export interface FakeUsage {
  prompt_tokens: number
  completion_tokens: number
  /** OpenAI reports the prompt tokens its cache served here (absent from many providers). */
  prompt_tokens_details?: { cached_tokens: number }
}

export interface FakeCall {
  /** Defaults to `call_<n>` (n counts calls across the fake's whole life). */
  id?: string
  name: string
  /** A JSON string as sent on the wire, or an object that is stringified. */
  arguments: string | Record<string, unknown>
}

export interface ReplyOptions {
  /** Default `stop` for text, `tool_calls` for tool calls. Any string passes through. */
  finishReason?: string
  /** `null` omits usage from the response. Default `{ prompt_tokens: 10, completion_tokens: 5 }`. */
  usage?: FakeUsage | null
  /** Default: the model named in the request. */
  model?: string
  /** Streamed (`stream: true`): send this many chunks, then stall until the request aborts. */
  stallAfterChunks?: number
}

/** One scripted answer; build them with `reply.*`. */
export type FakeReply =
  | { kind: 'text'; content: string | null; options: ReplyOptions }
  | { kind: 'tool_calls'; calls: FakeCall[]; content: string | null; options: ReplyOptions }
  | {
      kind: 'error'
      status: number
      message: string
      headers: Record<string, string>
      code?: string
      type?: string
      param?: string
    }
  | { kind: 'raw'; status: number; body: unknown }
  | { kind: 'hang' }
  | { kind: 'network'; message: string }

/** Builders for scripted replies. */
export const reply = {
  /** An assistant message with `content` (may be null or empty). */
  text: (content: string | null, options: ReplyOptions = {}): FakeReply => ({
    kind: 'text',
    content,
    options,
  }),
  /** An assistant message with tool calls (and optional thought `content`). */
  toolCalls: (
    calls: FakeCall[],
    options: ReplyOptions & { content?: string | null } = {},
  ): FakeReply => ({ kind: 'tool_calls', calls, content: options.content ?? null, options }),
  /** An HTTP failure with an OpenAI-shaped error body (`{ error: { message, type, code, param } }`). */
  error: (
    status: number,
    message: string,
    headers: Record<string, string> = {},
    details: { code?: string; type?: string; param?: string } = {},
  ): FakeReply => ({ kind: 'error', status, message, headers, ...details }),
  /** Any JSON body with any status (e.g. a 200 without `choices`). */
  raw: (body: unknown, status = 200): FakeReply => ({ kind: 'raw', status, body }),
  /** Never answers; rejects when the request's signal aborts (a client timeout or cancel). */
  hang: (): FakeReply => ({ kind: 'hang' }),
  /** The connection fails (fetch rejects with a TypeError). */
  networkError: (message = 'Network connection lost.'): FakeReply => ({ kind: 'network', message }),
}

/** The parsed JSON body of a chat-completions request. */
export interface ReceivedBody {
  model: string
  messages: Array<Record<string, any>>
  tools?: Array<Record<string, any>>
  tool_choice?: unknown
  temperature?: number
  max_tokens?: number
  [key: string]: unknown
}

export class FakeOpenAI {
  /** Bodies of every request that parsed as JSON, valid or not, in arrival order. */
  readonly bodies: ReceivedBody[] = []
  /** Why each rejected request was rejected (empty when every request was valid). */
  readonly violations: string[] = []
  /** `Date.now()` when each request arrived (a faked clock makes the gaps the retry waits). */
  readonly arrivals: number[] = []
  readonly apiKey: string
  readonly #queue: FakeReply[] = []
  #calls = 0
  #completions = 0
  #taken = 0

  /** Answers `stream: true` with the 400 a provider without streaming sends. */
  refuseStream: boolean
  /** Streamed text and arguments are cut into pieces of this many characters. */
  pieceChars: number
  /** The SSE bytes are written in pieces of this many bytes (splitting lines and characters). */
  writeBytes: number

  constructor(
    options: {
      apiKey?: string
      refuseStream?: boolean
      pieceChars?: number
      writeBytes?: number
    } = {},
  ) {
    this.apiKey = options.apiKey ?? FAKE_OPENAI_KEY
    this.refuseStream = options.refuseStream ?? false
    this.pieceChars = options.pieceChars ?? 3
    this.writeBytes = options.writeBytes ?? 7
  }

  /** Append scripted replies; each valid request consumes one. */
  enqueue(...replies: FakeReply[]): this {
    this.#queue.push(...replies)
    return this
  }

  /**
   * The violations so far, now expected: a test that sends a bad request on purpose takes them,
   * and the after-test check (`verifyFakes`) fails only on violations nobody took.
   */
  takeViolations(): string[] {
    this.#taken = this.violations.length
    return [...this.violations]
  }

  /** Violations no test took: requests the real API would have refused. */
  untakenViolations(): string[] {
    return this.violations.slice(this.#taken)
  }

  /** Scripted replies not consumed yet. */
  get pending(): number {
    return this.#queue.length
  }

  /** The last body received (throws when none arrived, so a test cannot pass vacuously). */
  lastBody(): ReceivedBody {
    const body = this.bodies.at(-1)
    if (!body) throw new Error('fake-openai: no request received')
    return body
  }

  /** Pass to `Outbound.on(FAKE_OPENAI_HOST, api.handler)`. */
  readonly handler: FakeHandler = async (req) => {
    this.arrivals.push(Date.now())
    const url = new URL(req.url)
    if (req.method !== 'POST' || url.pathname !== '/v1/chat/completions') {
      return this.#reject(
        404,
        `Invalid URL (${req.method} ${url.pathname})`,
        'invalid_request_error',
      )
    }
    const auth = req.headers.get('authorization') ?? ''
    if (auth !== `Bearer ${this.apiKey}`) {
      // Echoes the key it got, as some providers do: the adapter must redact it.
      const got = auth.replace(/^Bearer /, '')
      return this.#reject(
        401,
        `Incorrect API key provided: ${got}.`,
        'invalid_request_error',
        'invalid_api_key',
      )
    }
    let body: ReceivedBody
    try {
      body = JSON.parse(await req.text())
    } catch {
      return this.#reject(
        400,
        'We could not parse the JSON body of your request.',
        'invalid_request_error',
      )
    }
    this.bodies.push(body)
    const problem = checkBody(body)
    if (problem)
      return this.#reject(400, problem.message, 'invalid_request_error', null, problem.param)
    if (body.stream === true && this.refuseStream) {
      // What vLLM-style servers and proxies without streaming answer; not a violation.
      return errorResponse(
        400,
        {
          message: 'Streaming is not supported for this model.',
          type: 'invalid_request_error',
          param: 'stream',
          code: 'unsupported_parameter',
        },
        {},
      )
    }

    const next = this.#queue.shift()
    if (!next) {
      return this.#reject(
        400,
        `fake-openai: no scripted reply left for request ${this.bodies.length}`,
        'fake_exhausted',
      )
    }
    return this.#answer(next, body, req)
  }

  #reject(
    status: number,
    message: string,
    type: string,
    code: string | null = null,
    param: string | null = null,
  ) {
    this.violations.push(`${status} ${message}`)
    return errorResponse(status, { message, type, param, code }, {})
  }

  async #answer(next: FakeReply, body: ReceivedBody, req: Request): Promise<Response> {
    switch (next.kind) {
      case 'error':
        return errorResponse(
          next.status,
          {
            message: next.message,
            type: next.type ?? 'api_error',
            param: next.param ?? null,
            code: next.code ?? null,
          },
          next.headers,
        )
      case 'raw':
        return Response.json(next.body, { status: next.status })
      case 'network':
        throw new TypeError(next.message)
      case 'hang':
        return new Promise<Response>((_, reject) => {
          const abort = () =>
            reject(
              req.signal.reason ?? new DOMException('The operation was aborted.', 'AbortError'),
            )
          if (req.signal.aborted) abort()
          else req.signal.addEventListener('abort', abort, { once: true })
        })
      case 'text':
        return this.#completion(
          body,
          { role: 'assistant', content: next.content, refusal: null },
          'stop',
          next.options,
        )
      case 'tool_calls': {
        const tool_calls = next.calls.map((call) => ({
          id: call.id ?? `call_${++this.#calls}`,
          type: 'function',
          function: {
            name: call.name,
            arguments:
              typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments),
          },
        }))
        const message: FakeMessage = {
          role: 'assistant',
          content: next.content,
          refusal: null,
          tool_calls,
        }
        return this.#completion(body, message, 'tool_calls', next.options)
      }
    }
  }

  #completion(
    body: ReceivedBody,
    message: FakeMessage,
    finish: string,
    options: ReplyOptions,
  ): Response {
    const usage =
      options.usage === undefined ? { prompt_tokens: 10, completion_tokens: 5 } : options.usage
    if (body.stream === true) return this.#stream(body, message, finish, options, usage)
    return Response.json({
      id: `chatcmpl-fake-${++this.#completions}`,
      object: 'chat.completion',
      created: 1_700_000_000 + this.#completions,
      model: options.model ?? body.model,
      choices: [
        { index: 0, message, logprobs: null, finish_reason: options.finishReason ?? finish },
      ],
      ...(usage
        ? { usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens } }
        : {}),
    })
  }
  /**
   * The same reply as chat.completion.chunk events, the way OpenAI streams: a role delta, text
   * in small pieces, each tool call's id and name first and its arguments in pieces (the next
   * call's start in the same chunk as the last piece of the one before), the finish reason, then
   * usage alone in a last chunk with no choices when `stream_options.include_usage` is set.
   */
  #stream(
    body: ReceivedBody,
    message: FakeMessage,
    finish: string,
    options: ReplyOptions,
    usage: FakeUsage | null,
  ): Response {
    const id = `chatcmpl-fake-${++this.#completions}`
    const created = 1_700_000_000 + this.#completions
    const model = options.model ?? body.model
    const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) => ({
      id,
      object: 'chat.completion.chunk',
      created,
      model,
      choices,
      ...extra,
    })
    const delta = (d: Record<string, unknown>, finishReason: string | null = null) =>
      chunk([{ index: 0, delta: d, logprobs: null, finish_reason: finishReason }])
    const chunks: unknown[] = [
      delta({ role: 'assistant', content: message.content === null ? null : '', refusal: null }),
    ]
    for (const piece of pieces(message.content ?? '', this.pieceChars)) {
      chunks.push(delta({ content: piece }))
    }
    let carry: Record<string, unknown>[] = []
    for (const [index, call] of (message.tool_calls ?? []).entries()) {
      const head = {
        index,
        id: call.id,
        type: 'function',
        function: { name: call.function.name, arguments: '' },
      }
      chunks.push(delta({ tool_calls: [...carry, head] }))
      carry = []
      const parts = pieces(call.function.arguments, this.pieceChars)
      const last = parts.pop()
      for (const part of parts)
        chunks.push(delta({ tool_calls: [{ index, function: { arguments: part } }] }))
      if (last !== undefined) carry = [{ index, function: { arguments: last } }]
    }
    if (carry.length) chunks.push(delta({ tool_calls: carry }))
    chunks.push(delta({}, options.finishReason ?? finish))
    const include = (body.stream_options as { include_usage?: boolean } | undefined)?.include_usage
    if (include && usage) {
      const total = usage.prompt_tokens + usage.completion_tokens
      chunks.push(chunk([], { usage: { ...usage, total_tokens: total } }))
    }
    const sse = chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`)
    sse.push('data: [DONE]\n\n')
    const stall = options.stallAfterChunks
    const bytes = new TextEncoder().encode(sse.slice(0, stall ?? sse.length).join(''))
    const size = this.writeBytes
    let at = 0
    let onAbort: (() => void) | undefined
    const stream = new ReadableStream<Uint8Array>({
      pull: async (controller) => {
        if (at < bytes.length) {
          controller.enqueue(bytes.slice(at, at + size))
          at += size
          return
        }
        if (stall === undefined) return controller.close()
        // Stalled: nothing more comes; the reader's cancel (an abort) ends it.
        await new Promise<void>((resolve) => (onAbort = resolve))
      },
      cancel: () => onAbort?.(),
    })
    return new Response(stream, {
      headers: { 'content-type': 'text/event-stream; charset=utf-8' },
    })
  }
}

interface FakeMessage {
  role: 'assistant'
  content: string | null
  refusal: null
  tool_calls?: { id: string; type: string; function: { name: string; arguments: string } }[]
}

/** Cuts text into pieces of `n` characters (code points, as a tokenizer would never split one). */
function pieces(text: string, n: number): string[] {
  const chars = [...text]
  const out: string[] = []
  for (let i = 0; i < chars.length; i += n) out.push(chars.slice(i, i + n).join(''))
  return out
}

function errorResponse(status: number, error: object, headers: Record<string, string>): Response {
  return Response.json({ error }, { status, headers })
}

const ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool'])
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/

/** What the real API would reject about this body, or undefined when it is valid. */
function checkBody(body: ReceivedBody): { message: string; param: string } | undefined {
  if (typeof body !== 'object' || body === null)
    return { message: 'body must be an object', param: '' }
  if (typeof body.model !== 'string' || !body.model) {
    return { message: 'you must provide a model parameter', param: 'model' }
  }
  if (!Array.isArray(body.messages) || body.messages.length === 0) {
    return {
      message: "Invalid 'messages': empty array. Expected an array with minimum length 1.",
      param: 'messages',
    }
  }
  if (body.temperature !== undefined && !(body.temperature >= 0 && body.temperature <= 2)) {
    return {
      message: `Invalid 'temperature': ${body.temperature}. Expected 0..2.`,
      param: 'temperature',
    }
  }
  if (body.stream_options !== undefined && body.stream !== true) {
    return {
      message: "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
      param: 'stream_options',
    }
  }
  if (body.tool_choice !== undefined && body.tools === undefined) {
    return {
      message:
        "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.",
      param: 'tool_choice',
    }
  }
  return checkTools(body.tools) ?? checkMessages(body.messages)
}

function checkTools(tools: unknown): { message: string; param: string } | undefined {
  if (tools === undefined) return
  if (!Array.isArray(tools) || tools.length === 0) {
    return { message: "Invalid 'tools': expected a non-empty array.", param: 'tools' }
  }
  for (const [i, tool] of tools.entries()) {
    const fn = tool?.function
    const ok =
      tool?.type === 'function' &&
      typeof fn?.name === 'string' &&
      TOOL_NAME.test(fn.name) &&
      typeof fn.description === 'string' &&
      typeof fn.parameters === 'object' &&
      fn.parameters !== null &&
      !Array.isArray(fn.parameters)
    if (!ok) {
      return {
        message: `Invalid 'tools[${i}]': expected { type: 'function', function: { name, description, parameters } }.`,
        param: `tools[${i}]`,
      }
    }
  }
}

function checkMessages(
  messages: Array<Record<string, any>>,
): { message: string; param: string } | undefined {
  // Ids of the last assistant message's tool calls still waiting for their tool message, in order.
  let awaiting: string[] = []
  for (const [i, m] of messages.entries()) {
    const param = `messages[${i}]`
    if (!ROLES.has(m?.role)) return { message: `Invalid value for 'role': ${m?.role}.`, param }
    if (m.role !== 'tool' && awaiting.length) {
      return {
        message: `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${awaiting.join(', ')}`,
        param,
      }
    }
    if (m.role === 'assistant') {
      if (m.tool_calls !== undefined) {
        if (!Array.isArray(m.tool_calls) || m.tool_calls.length === 0) {
          return { message: `Invalid '${param}.tool_calls': empty array.`, param }
        }
        for (const call of m.tool_calls) {
          if (
            typeof call?.id !== 'string' ||
            call.type !== 'function' ||
            typeof call.function?.name !== 'string' ||
            typeof call.function?.arguments !== 'string'
          ) {
            return {
              message: `Invalid '${param}.tool_calls': each needs id, type 'function', function.name and function.arguments (a string).`,
              param,
            }
          }
        }
        awaiting = m.tool_calls.map((c: { id: string }) => c.id)
      } else if (typeof m.content !== 'string') {
        return {
          message: `Invalid '${param}.content': an assistant message without tool_calls needs content.`,
          param,
        }
      }
    } else if (m.role === 'tool') {
      if (awaiting.length === 0) {
        return {
          message:
            "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
          param,
        }
      }
      if (m.tool_call_id !== awaiting[0]) {
        return {
          message: `Invalid '${param}.tool_call_id': ${m.tool_call_id} does not answer the next pending tool call (${awaiting[0]}); tool messages must follow the order of the calls.`,
          param,
        }
      }
      if (typeof m.content !== 'string')
        return { message: `Invalid '${param}.content': expected a string.`, param }
      awaiting = awaiting.slice(1)
    } else if (typeof m.content !== 'string') {
      return { message: `Invalid '${param}.content': expected a string.`, param }
    }
  }
  if (awaiting.length) {
    return {
      message: `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${awaiting.join(', ')}`,
      param: 'messages',
    }
  }
}
