import { toJSONSchema } from 'zod/v4/core'
import type { ToolSchema } from './model'
import { READ_OBSERVATION, readObservationTool } from './read-observation'
import type { Tool } from './tool'

/**
 * Each tool's parameter schema, derived once per isolate, not once per run's registry: a run
 * builds its registry afresh, and deriving a zod schema's JSON Schema was about 2% of a two-call
 * run's Worker CPU (bench/service-cost.mjs). Tools are immutable once defined.
 */
const PARAMS_SCHEMAS = new WeakMap<Tool, Record<string, unknown>>()

/** A tool's `inputSchema` as is, or derived from its zod params (`$schema` dropped: tokens). */
function paramsSchema(tool: Tool): Record<string, unknown> {
  let schema = PARAMS_SCHEMAS.get(tool)
  if (!schema) {
    if (tool.inputSchema) {
      schema = tool.inputSchema as Record<string, unknown>
    } else {
      const { $schema: _ignored, ...rest } = toJSONSchema(tool.params, {
        io: 'input',
      }) as Record<string, unknown>
      schema = rest
    }
    PARAMS_SCHEMAS.set(tool, schema)
  }
  return schema
}

/** The tools one run may use, rendered for either protocol from the same zod schemas. */
export class ToolRegistry {
  readonly #tools = new Map<string, Tool>()
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
    const tool = this.#tools.get(name)
    if (!tool) throw new TypeError(`ToolRegistry: no tool "${name}"`)
    return paramsSchema(tool)
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
