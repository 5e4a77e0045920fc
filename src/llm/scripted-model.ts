/** A model that replays recorded outputs: the offline demo and the tests' model (docs/architecture.md#layers). */
import { ModelError } from '../errors/model-error'
import type { Model, ModelRequest, ModelResponse } from '../kernel/model'

/** One turn's output; an Error is thrown instead (to script provider failures). */
export type ScriptEntry = ModelResponse | Error

/**
 * A script: a list indexed by turn, or a function of the request and turn. The function returns
 * `undefined` when it has nothing for that turn.
 */
export type Script =
  | ScriptEntry[]
  | ((
      request: ModelRequest,
      turn: number,
    ) => ScriptEntry | undefined | Promise<ScriptEntry | undefined>)

export class ScriptedModel implements Model {
  readonly name: string
  /** Every request received, in order (for tests). */
  readonly requests: ModelRequest[] = []
  readonly #script: Script

  constructor(script: Script, options: { name?: string } = {}) {
    this.#script = script
    this.name = options.name ?? 'scripted'
  }

  /**
   * Answers the turn the request is at. The turn is the number of assistant messages already in
   * the request, not a counter: a Durable Object may be evicted between steps and rebuild this.
   */
  async complete(request: ModelRequest): Promise<ModelResponse> {
    this.requests.push({ ...request, messages: [...request.messages] })
    const turn = request.messages.filter((m) => m.role === 'assistant').length
    const entry =
      typeof this.#script === 'function' ? await this.#script(request, turn) : this.#script[turn]
    if (entry === undefined) {
      throw new ModelError(`scripted model has no output for turn ${turn}`, {
        code: 'script_exhausted',
      })
    }
    if (entry instanceof Error) throw entry
    return structuredClone(entry)
  }
}
