/** The call name `parseOutput` returns when the text holds no usable action. */
export const UNPARSABLE = '__unparsable__'
/**
 * The call name that ends a run; its `args.answer` is the final answer. Not `finish`: a
 * deployment may offer a tool of that name, and an offered tool is always that tool.
 */
export const FINISH = '__finish__'

export interface ParsedCall {
  name: string
  args: Record<string, unknown>
  /**
   * True when the action needed repairs (single quotes, trailing commas, …) to parse. Such
   * arguments must not become a side-effect request (docs/architecture.md#approvals).
   */
  repaired?: boolean
}

/** The format families `parseOutput` reads (docs/models.md, "Formats the text protocol reads"). */
export type Family =
  | 'json'
  | 'hermes'
  | 'qwen3-coder'
  | 'glm'
  | 'llama'
  | 'mistral'
  | 'deepseek'
  | 'kimi'
  | 'harmony'
  | 'xml'
  | 'react'
  | 'python'

/** What parseOutput knows of one offered tool: its parameters' JSON types, by name. */
export interface ToolShape {
  params: Record<string, string>
  required: string[]
}

/** The offered tools, by name; optional, but it sharpens the parse (see `ParseOptions`). */
export type ToolShapes = ReadonlyMap<string, ToolShape>

/** A call one family found, and where: the earliest candidate wins. */
export interface Candidate {
  at: number
  thought: string
  call: ParsedCall
  family: Family
  /** Arguments came as text (XML, GLM, Qwen3-Coder): coerce them to the declared types. */
  stringArgs?: boolean
  /** With an UNPARSABLE call: what the reply holds that cannot be used, told to the model. */
  problem?: string
}

export function finishCall(answer: string): ParsedCall {
  return { name: FINISH, args: { answer } }
}

export function markRepaired(call: ParsedCall, repaired: boolean | undefined): ParsedCall {
  return repaired ? Object.assign({}, call, { repaired: true }) : call
}

const FINISH_NAME = /^(?:finish|final[ _-]?answer)$/i

/**
 * `finish`, `Finish`, `final_answer`, `Final Answer`: the kernel's finish, unless the deployment
 * offers a tool of that name (smolagents' `final_answer`, a `finish` tool), which it then is.
 */
export function isFinishName(name: string, tools?: ToolShapes): boolean {
  if (!FINISH_NAME.test(name)) return false
  return !tools || !tools.has(resolveName(name, tools))
}

/**
 * The tool a written name means: `functions.get_weather:0` (Kimi, harmony) is `get_weather`;
 * with shapes, a name that differs only in case (`Search` for `search`) is that tool.
 */
export function resolveName(name: string, tools: ToolShapes | undefined): string {
  let n = name.trim()
  if (n.startsWith('functions.')) n = n.slice('functions.'.length)
  n = n.replace(/:\d+$/, '')
  if (!tools || tools.has(n)) return n
  const lower = n.toLowerCase()
  for (const known of tools.keys()) if (known.toLowerCase() === lower) return known
  return n
}

/**
 * Arguments written as text are typed by the tool's schema (`<parameter=days>3` is 3 when
 * `days` is an integer); plain input (`{ _raw }`) goes to a tool's only string parameter.
 */
export function shapeArgs(
  args: Record<string, unknown>,
  shape: ToolShape | undefined,
  stringArgs: boolean,
): Record<string, unknown> {
  const keys = Object.keys(args)
  if (shape && keys.length === 1 && keys[0] === '_raw' && typeof args._raw === 'string') {
    const target = soleStringParam(shape)
    if (target) return { [target]: args._raw }
  }
  if (!stringArgs) return args
  const out: Record<string, unknown> = {}
  for (const key of keys) out[key] = coerce(args[key], shape?.params[key])
  return out
}

function soleStringParam(shape: ToolShape): string | undefined {
  const names = Object.keys(shape.params)
  const candidates = shape.required.length === 1 ? shape.required : names
  if (candidates.length !== 1) return undefined
  return shape.params[candidates[0]!] === 'string' ? candidates[0] : undefined
}

function coerce(value: unknown, type: string | undefined): unknown {
  if (typeof value !== 'string' || type === 'string') return value
  const text = value.trim()
  if (type === undefined || type === 'any') {
    // Untyped: only a value written as a JSON object or array is read as one.
    if (!/^[[{]/.test(text)) return value
    try {
      return JSON.parse(text)
    } catch {
      return value
    }
  }
  if (type === 'integer' || type === 'number') {
    const n = Number(text)
    return text !== '' && Number.isFinite(n) ? n : value
  }
  if (type === 'boolean') {
    if (/^true$/i.test(text)) return true
    if (/^false$/i.test(text)) return false
    return value
  }
  if (type === 'null' && /^(?:null|none)$/i.test(text)) return null
  if (type === 'object' || type === 'array') {
    try {
      return JSON.parse(text)
    } catch {
      return value // the schema check names the problem to the model
    }
  }
  return value
}

/** Shapes from JSON Schemas of tool parameters (the registry's `jsonSchema`). */
export function toolShapes(
  tools: Iterable<{ name: string; schema: Record<string, unknown> }>,
): ToolShapes {
  const out = new Map<string, ToolShape>()
  for (const { name, schema } of tools) {
    const props = (schema.properties ?? {}) as Record<string, { type?: unknown }>
    const params: Record<string, string> = {}
    for (const [key, prop] of Object.entries(props)) {
      const type = Array.isArray(prop?.type) ? prop.type.find((t) => t !== 'null') : prop?.type
      params[key] = typeof type === 'string' ? type : 'any'
    }
    const required = Array.isArray(schema.required) ? (schema.required as string[]) : []
    out.set(name, { params, required })
  }
  return out
}
