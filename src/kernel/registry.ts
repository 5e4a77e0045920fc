import { toJSONSchema } from 'zod/v4/core'
import type { ToolSchema } from './model'
import { READ_OBSERVATION, readObservationTool } from './read-observation'
import type { Tool } from './tool'

/** The tools one run may use, rendered for either protocol from the same zod schemas. */
export class ToolRegistry {
  readonly #tools = new Map<string, Tool>()
  readonly #schemas = new Map<string, Record<string, unknown>>()
  #textSpec: string | undefined
  #openaiTools: ToolSchema[] | undefined
  #forRun: ToolRegistry | undefined

  constructor(tools: Iterable<Tool>) {
    for (const tool of tools) {
      if (this.#tools.has(tool.name)) {
        throw new TypeError(`ToolRegistry: tool "${tool.name}" is registered twice`)
      }
      this.#tools.set(tool.name, tool)
    }
  }

  get(name: string): Tool | undefined {
    return this.#tools.get(name)
  }

  /** This registry plus the built-in `read_observation` (made once, then kept). */
  forRun(): ToolRegistry {
    if (this.#tools.has(READ_OBSERVATION)) return this
    this.#forRun ??= new ToolRegistry([...this.#tools.values(), readObservationTool])
    return this.#forRun
  }

  names(): string[] {
    return [...this.#tools.keys()]
  }

  list(): Tool[] {
    return [...this.#tools.values()]
  }

  /** A registry holding only `names` (every name must exist here). */
  subset(names: readonly string[]): ToolRegistry {
    const missing = names.filter((n) => !this.#tools.has(n))
    if (missing.length) {
      throw new TypeError(
        `unknown tools: ${missing.join(', ')}; available: ${this.names().join(', ')}`,
      )
    }
    return new ToolRegistry(names.map((n) => this.#tools.get(n)!))
  }

  /**
   * JSON Schema of a tool's parameters: its `inputSchema` as is, or derived from its zod params
   * (cached; `$schema` dropped to save prompt tokens).
   */
  jsonSchema(name: string): Record<string, unknown> {
    let schema = this.#schemas.get(name)
    if (!schema) {
      const tool = this.#tools.get(name)
      if (!tool) throw new TypeError(`ToolRegistry: no tool "${name}"`)
      if (tool.inputSchema) {
        schema = tool.inputSchema as Record<string, unknown>
      } else {
        const { $schema: _ignored, ...rest } = toJSONSchema(tool.params, {
          io: 'input',
        }) as Record<string, unknown>
        schema = rest
      }
      this.#schemas.set(name, schema)
    }
    return schema
  }

  /** The text-protocol tool block: name, purpose, parameters (JSON Schema), returns. */
  textSpec(): string {
    this.#textSpec ??= this.list()
      .map((t) =>
        [
          `### ${t.name}${t.sideEffect ? ' (side effect: needs approval)' : ''}`,
          t.description,
          `Parameters (JSON Schema): ${JSON.stringify(this.jsonSchema(t.name))}`,
          `Returns: ${t.returns}`,
        ].join('\n'),
      )
      .join('\n\n')
    return this.#textSpec
  }

  /** The chat-completions `tools` array. */
  openaiTools(): ToolSchema[] {
    this.#openaiTools ??= this.list().map((t) => ({
      type: 'function',
      function: {
        name: t.name,
        description: t.sideEffect
          ? `${t.description} (Side effect: a person must approve each call.)`
          : t.description,
        parameters: this.jsonSchema(t.name),
      },
    }))
    return this.#openaiTools
  }
}
