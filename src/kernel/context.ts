import type { AgentSnapshot } from './agent-schema'
import type { ChatMessage, ModelRequest, Protocol } from './model'
import { promptFormatOf } from './prompt-format'
import type { ToolRegistry } from './registry'
import type { RunState, Step } from './state'
import { elisionSaving, FRAMING, stepMessages } from './step-messages'
import { runHead, systemOf, type RunHead } from './system-prompt'
import { approxTokens } from './tokens'

/**
 * Once a request would pass `maxContextTokens`, old observations are elided down to this share of
 * it, not just under it: the prompt then grows for several steps with a byte-identical prefix
 * (which providers cache) before the next cut, instead of shifting at every step.
 */
export const CONTEXT_LOW_WATER = 0.5

/** The context cut a request was built with (see `RenderCache.build`). */
export interface ContextCut {
  /** Steps (the oldest) whose observations the request elided. */
  steps: number
  /** Tokens that saved. */
  tokens: number
}

/**
 * Each step renders to the same messages in every later request, so a run's request is kept
 * here between thinks (one cache per slice: per Durable Object invocation) and only
 * steps that are new or changed are rendered. Steps are copy-on-write, so identity is enough.
 * Not a WeakMap keyed by step: an entry per step costs more CPU than the step (npm run bench).
 */
export class RenderCache {
  #key:
    | {
        protocol: Protocol
        registry: ToolRegistry
        task: string
        history: string
        agent: AgentSnapshot
      }
    | undefined
  /** The steps rendered, in order. */
  #steps: Step[] = []
  /** Where step i's messages start in #messages, and the tokens before it. */
  #starts: number[] = []
  #tokensBefore: number[] = []
  /** The head (system prompt and task) and every rendered step's messages. */
  #messages: ChatMessage[] = []
  #tokens = 0
  /** Steps rendered with their observations elided (the first #cut). */
  #cut = 0
  /** The run head the messages start with (looked up once per run, not once per step). */
  #head: RunHead | undefined
  /**
   * The steps array last rendered, and its length then: a think measures the request
   * (`tokens`) and then builds it (`build`) from the same array, so the second finds it rendered
   * without comparing every step again.
   */
  #rendered: Step[] | null = null
  #renderedLength = 0

  /**
   * The request for `state`: its messages (a fresh array), their estimated tokens, and the
   * context cut. The cut is the last step's (so a request's prefix stays byte-identical from step
   * to step, and across a resume, which reads it from the stored step); when the request would
   * pass `budget.maxContextTokens` the oldest observations are elided down to the low water
   * mark, never the latest step's.
   */
  build(state: RunState, registry: ToolRegistry): BuiltRequest {
    const cut = this.#fit(state, registry)
    const { steps, protocol } = state
    let saved = 0
    for (let i = 0; i < cut; i++) saved += elisionSaving(steps[i]!)
    const head = this.#head!
    // A copy: the model may keep the request, and the next build appends to ours.
    const request: BuiltRequest['request'] = { protocol, messages: this.#messages.slice() }
    if (protocol === 'native') request.tools = head.tools
    if (state.agent.temperature !== null) request.temperature = state.agent.temperature
    const tokens = this.#tokens
    return {
      request,
      tokens,
      // About 4 bytes a token: close enough for a CPU bound, and free to compute.
      bytes: tokens * 4,
      cut: { steps: cut, tokens: saved },
      toolSpecTokens: head.specTokens[protocol],
    }
  }

  /** The estimated tokens of the request `build` would make, without making it. */
  tokens(state: RunState, registry: ToolRegistry): number {
    this.#fit(state, registry)
    return this.#tokens
  }

  /** Renders `state`'s steps, cutting old observations as `build` says; returns the cut. */
  #fit(state: RunState, registry: ToolRegistry): number {
    const { steps } = state
    let cut = steps.length ? steps[steps.length - 1]!.elidedSteps : 0
    this.#render(state, registry, cut)
    const limit = state.budget.maxContextTokens
    if (limit !== undefined && this.#tokens > limit && cut < steps.length - 1) {
      let tokens = this.#tokens
      while (cut < steps.length - 1 && tokens > limit * CONTEXT_LOW_WATER) {
        tokens -= elisionSaving(steps[cut]!)
        cut++
      }
      this.#render(state, registry, cut)
    }
    return cut
  }

  /** Brings the rendering up to `state`'s steps, the first `cut` of them elided. */
  #render(state: RunState, registry: ToolRegistry, cut: number): void {
    const { protocol, task, steps, agent } = state
    const history = state.conversation?.prompt ?? ''
    const key = this.#key
    if (
      !key ||
      key.protocol !== protocol ||
      key.registry !== registry ||
      key.task !== task ||
      key.history !== history ||
      (key.agent !== agent &&
        (key.agent.version !== agent.version || key.agent.promptFormat !== agent.promptFormat))
    ) {
      this.#reset(protocol, registry, task, history, agent)
    } else if (
      steps === this.#rendered &&
      steps.length === this.#renderedLength &&
      cut === this.#cut
    ) {
      return
    }
    this.#rendered = steps
    this.#renderedLength = steps.length
    const cached = this.#steps
    let i = 0
    const same = Math.min(cut, this.#cut)
    while (i < steps.length && i < cached.length && steps[i] === cached[i]) i++
    // Steps whose elision changed are rendered again too.
    if (cut !== this.#cut && i > same) i = same
    this.#cut = cut
    if (i < cached.length) {
      // Steps from i on changed (or the state is another run's): drop their renderings.
      this.#messages.length = this.#starts[i]!
      this.#tokens = this.#tokensBefore[i]!
      cached.length = this.#starts.length = this.#tokensBefore.length = i
    }
    const format = promptFormatOf(agent)
    for (; i < steps.length; i++) {
      const step = steps[i]!
      const rendered = stepMessages(step, protocol, i < cut, format)
      cached.push(step)
      this.#starts.push(this.#messages.length)
      this.#tokensBefore.push(this.#tokens)
      const { messages } = rendered
      for (let k = 0; k < messages.length; k++) this.#messages.push(messages[k]!)
      this.#tokens += rendered.tokens
    }
  }

  #reset(
    protocol: Protocol,
    registry: ToolRegistry,
    task: string,
    history: string,
    agent: AgentSnapshot,
  ): void {
    this.#key = { protocol, registry, task, history, agent }
    const run = runHead(registry, agent)
    this.#head = run
    const content = `Task: ${task}`
    const head: ChatMessage[] = [
      { role: 'system', content: systemOf(run, protocol) },
      { role: 'user', content },
    ]
    let tokens = run.tokens[protocol] + approxTokens(content) + 4
    // A follow-up's history (frozen in its state: conversation.ts) comes before its task.
    if (history) {
      head.splice(1, 0, { role: 'user', content: history })
      tokens += FRAMING + approxTokens(history)
    }
    this.#messages = head
    this.#tokens = tokens
    this.#steps = []
    this.#starts = []
    this.#tokensBefore = []
    this.#cut = 0
    this.#rendered = null
  }
}

export interface BuiltRequest {
  request: Omit<ModelRequest, 'timeoutMs' | 'signal'>
  /** Estimated prompt tokens of this request. */
  tokens: number
  /** Old observations this request elided (maxContextTokens). */
  cut: ContextCut
  /** Estimated tokens of the tool specs it offers: the fixed cost of each tool, every step. */
  toolSpecTokens: number
  /** Approximate bytes of the request (CPU accounting, docs/architecture.md#budgets-and-edge-limits). */
  bytes: number
}

/** The request for the next think (docs/architecture.md#step-machine): `cache.build`. */
export function buildRequest(
  state: RunState,
  registry: ToolRegistry,
  cache: RenderCache = new RenderCache(),
): BuiltRequest {
  return cache.build(state, registry)
}
