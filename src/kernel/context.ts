import type { ChatMessage, ModelRequest, NativeToolCall, Protocol } from './model'
import { TEXT_PROTOCOL_FORMAT } from './parse/index'
import type { ToolRegistry } from './registry'
import type { Call, RunState, Step } from './state'
import { approxTokens, approxTokensJoined } from './tokens'

const NATIVE_SYSTEM =
  'You are an agent that solves the task step by step. Think briefly, then call tools to gather ' +
  'facts; never invent observations. Tools marked as side effects need a person to approve each ' +
  'call. When you have the answer, reply with the final answer as plain text and no tool call.'

const TEXT_SYSTEM_HEAD =
  'You are an agent that solves the task step by step. Each reply is one step: a short thought ' +
  'and exactly one action. Never invent observations: they come back to you after each action. ' +
  'Tools marked as side effects need a person to approve each call.'

// Built once per registry: the tool block is the same for every step of every run using it.
const systemCache = new WeakMap<ToolRegistry, { text: string; native: string }>()
function systemPrompts(registry: ToolRegistry): { text: string; native: string } {
  let cached = systemCache.get(registry)
  if (!cached) {
    cached = {
      text: `${TEXT_SYSTEM_HEAD}\n\n${TEXT_PROTOCOL_FORMAT}\n\n## Tools\n\n${registry.textSpec()}`,
      native: NATIVE_SYSTEM,
    }
    systemCache.set(registry, cached)
  }
  return cached
}

type Rendered = { messages: ChatMessage[]; tokens: number }

/** The messages one step contributes to every later request, and their estimated tokens. */
export function stepMessages(step: Step, protocol: Protocol): Rendered {
  return protocol === 'native' ? nativeStep(step) : textStep(step)
}

/**
 * Each step renders to the same messages in every later request, so a run's request is kept
 * here between thinks (one cache per slice: per Durable Object invocation) and only
 * steps that are new or changed are rendered. Steps are copy-on-write, so identity is enough.
 * Not a WeakMap keyed by step: an entry per step costs more CPU than the step (npm run bench).
 */
export class RenderCache {
  #key: { protocol: Protocol; registry: ToolRegistry; task: string } | undefined
  /** The steps rendered, in order. */
  #steps: Step[] = []
  /** Where step i's messages start in #messages, and the tokens before it. */
  #starts: number[] = []
  #tokensBefore: number[] = []
  /** The head (system prompt and task) and every rendered step's messages. */
  #messages: ChatMessage[] = []
  #tokens = 0

  /** The messages of a request for `state` (a fresh array) and their estimated tokens. */
  build(state: RunState, registry: ToolRegistry): { messages: ChatMessage[]; tokens: number } {
    const { protocol, task, steps } = state
    const key = this.#key
    if (!key || key.protocol !== protocol || key.registry !== registry || key.task !== task) {
      this.#reset(protocol, registry, task)
    }
    const cached = this.#steps
    let i = 0
    while (i < steps.length && i < cached.length && steps[i] === cached[i]) i++
    if (i < cached.length) {
      // Steps from i on changed (or the state is another run's): drop their renderings.
      this.#messages.length = this.#starts[i]!
      this.#tokens = this.#tokensBefore[i]!
      cached.length = this.#starts.length = this.#tokensBefore.length = i
    }
    for (; i < steps.length; i++) {
      const step = steps[i]!
      const rendered = stepMessages(step, protocol)
      cached.push(step)
      this.#starts.push(this.#messages.length)
      this.#tokensBefore.push(this.#tokens)
      for (const m of rendered.messages) this.#messages.push(m)
      this.#tokens += rendered.tokens
    }
    // A copy: the model may keep the request, and the next build appends to ours.
    return { messages: this.#messages.slice(), tokens: this.#tokens }
  }

  #reset(protocol: Protocol, registry: ToolRegistry, task: string): void {
    this.#key = { protocol, registry, task }
    const system = systemPrompts(registry)
    const head: ChatMessage[] = [
      { role: 'system', content: protocol === 'native' ? system.native : system.text },
      { role: 'user', content: `Task: ${task}` },
    ]
    this.#messages = head
    this.#tokens = headTokens(registry, protocol, head)
    this.#steps = []
    this.#starts = []
    this.#tokensBefore = []
  }
}

function nativeStep(step: Step): Rendered {
  if (step.kind === 'format_error') {
    return said(step.text ?? '', step.formatError ?? '[FormatError]')
  }
  if (step.kind === 'finish') return said(step.answer ?? '')
  let tokens = FRAMING + approxTokens(step.thought)
  const toolCalls: NativeToolCall[] = []
  for (const c of step.calls) {
    const args = c.rawArgs ?? JSON.stringify(c.args)
    toolCalls.push({ id: c.id, type: 'function', function: { name: c.name, arguments: args } })
    tokens += approxTokens(args) + approxTokens(c.name) + FRAMING
  }
  const messages: ChatMessage[] = [
    { role: 'assistant', content: step.thought || null, tool_calls: toolCalls },
  ]
  for (const c of step.calls) {
    messages.push({ role: 'tool', tool_call_id: c.id, content: c.observation ?? '' })
    tokens += FRAMING + observationTokens(c)
  }
  return { messages, tokens }
}

function textStep(step: Step): Rendered {
  const text = step.text ?? step.thought
  if (step.kind === 'format_error') return said(text, step.formatError ?? '[FormatError]')
  if (step.kind === 'finish') return said(text)
  const several = step.calls.length > 1
  const pieces: string[] = []
  let content = ''
  for (const c of step.calls) {
    if (pieces.length) pieces.push('\n\n')
    pieces.push(several ? `Observation (${c.name}):\n` : 'Observation:\n', c.observation ?? '')
  }
  // Concatenated, not joined: V8 keeps a concatenation as a rope until something reads it, so
  // the observations are copied once, when the request is serialized.
  for (const piece of pieces) content += piece
  // Counted whole (summing rounded counts of pieces would drift), without reading the rope.
  const tokens = 2 * FRAMING + approxTokens(text) + approxTokensJoined(pieces)
  return {
    messages: [
      { role: 'assistant', content: text },
      { role: 'user', content },
    ],
    tokens,
  }
}

/** An assistant message, and the user's answer to it (a format error) when there is one. */
function said(text: string, reply?: string): Rendered {
  const messages: ChatMessage[] = [{ role: 'assistant', content: text }]
  let tokens = FRAMING + approxTokens(text)
  if (reply !== undefined) {
    messages.push({ role: 'user', content: reply })
    tokens += FRAMING + approxTokens(reply)
  }
  return { messages, tokens }
}

// Role and framing tokens per message (and per native tool call).
const FRAMING = 4

/** Counted once when the call finished (native tool messages are the observation itself). */
function observationTokens(c: Call): number {
  return c.tokens ?? approxTokens(c.observation ?? '')
}

function messageTokens(m: ChatMessage): number {
  let n = FRAMING
  if (m.content) n += approxTokens(m.content)
  return n
}

export interface BuiltRequest {
  request: Omit<ModelRequest, 'timeoutMs' | 'signal'>
  /** Estimated prompt tokens of this request. */
  tokens: number
  /** Approximate bytes of the request (CPU accounting, docs/architecture.md#budgets-and-edge-limits). */
  bytes: number
}

const headCache = new WeakMap<ToolRegistry, Map<string, number>>()

/** The request for the next think (docs/architecture.md#step-machine). */
export function buildRequest(
  state: RunState,
  registry: ToolRegistry,
  cache: RenderCache = new RenderCache(),
): BuiltRequest {
  const protocol = state.protocol
  const { messages, tokens } = cache.build(state, registry)
  const request: BuiltRequest['request'] = { protocol, messages }
  if (protocol === 'native') request.tools = registry.openaiTools()
  // About 4 bytes a token: close enough for a CPU bound, and free to compute.
  return { request, tokens, bytes: tokens * 4 }
}

function headTokens(registry: ToolRegistry, protocol: Protocol, head: ChatMessage[]): number {
  let byProtocol = headCache.get(registry)
  if (!byProtocol) headCache.set(registry, (byProtocol = new Map()))
  const task = head[1]!.content ?? ''
  let system = byProtocol.get(protocol)
  if (system === undefined) {
    // The system prompt (and, natively, the tool schemas) is the same for every step.
    system = messageTokens(head[0]!)
    if (protocol === 'native') system += approxTokens(JSON.stringify(registry.openaiTools()))
    byProtocol.set(protocol, system)
  }
  return system + approxTokens(task as string) + 4
}
