import { compile, safeParse, util } from 'zod/v4/core'
import { describeIssues } from '../validation/describe-issues'
import { describeThrown } from './describe-thrown'
import type { Outcome } from './outcome'
import type { ToolRegistry } from './registry'
import type { CheckContext, Tool } from './tool'

/** A call as the step machine hands it to `dispatch`. */
export interface ToolCallRequest {
  id: string
  name: string
  args: Record<string, unknown>
  /** Set when the model's argument text could not be turned into an object. */
  argsError?: string | null
}

/**
 * Each tool's `params` as zod compiles them (`compile`: a check generated for the schema runs
 * first, and anything it does not pass is parsed by zod's own path, so the data and the issues
 * are zod's), made once per isolate. Every call is validated here at least once: on a 20-step
 * native run the generated check took about 0.2 µs a step off the kernel's warm CPU
 * (docs/development.md#kernel-performance). Where code generation is refused (workerd) zod's own
 * parse runs, as before.
 */
const COMPILED = new WeakMap<Tool['params'], Tool['params']>()

function paramsOf(tool: Tool): Tool['params'] {
  let params = COMPILED.get(tool.params)
  if (!params) {
    params = util.allowsEval.value ? compile(tool.params) : tool.params
    COMPILED.set(tool.params, params)
  }
  return params
}

/**
 * The tool a call names and its arguments parsed by the tool's schema, or what is wrong (the
 * text of the `[ToolError]` the model gets, naming the tool and the schema to follow).
 */
export function validateArgs(
  call: ToolCallRequest,
  registry: ToolRegistry,
): Outcome<{ tool: Tool; args: unknown }> {
  const tool = registry.get(call.name)
  if (!tool || call.argsError) return { ok: false, error: unusable(call, tool, registry) }
  const parsed = safeParse(paramsOf(tool), call.args)
  if (!parsed.success) return { ok: false, error: invalid(call, tool, parsed.error, registry) }
  return { ok: true, tool, args: parsed.data }
}

/*
 * What is wrong with a call, in functions of their own so that validateArgs, which every call
 * runs, stays small (docs/development.md#kernel-performance).
 */

/** A call naming no tool of the run, or whose argument text could not be read. */
function unusable(call: ToolCallRequest, tool: Tool | undefined, registry: ToolRegistry): string {
  if (!tool) return `unknown tool "${call.name}". Available tools: ${registry.names().join(', ')}`
  return (
    `${tool.name}: ${call.argsError}${tool.sideEffect ? ' The call was not executed.' : ''} ` +
    `Send the arguments as one JSON object matching: ${JSON.stringify(registry.jsonSchema(tool.name))}`
  )
}

/** Arguments the tool's schema refused: every problem, and the schema to follow. */
function invalid(
  call: ToolCallRequest,
  tool: Tool,
  error: { issues: Parameters<typeof describeIssues>[0] },
  registry: ToolRegistry,
): string {
  const problems = describeIssues(error.issues, call.args)
  return (
    `invalid arguments for ${tool.name}:\n${problems.map((p) => `- ${p}`).join('\n')}\n` +
    `Schema: ${JSON.stringify(registry.jsonSchema(tool.name))}`
  )
}

/** What the tool's own `check` finds wrong with validated arguments (a throw counts), if any. */
export function checkCall(tool: Tool, args: unknown, ctx: CheckContext): string | undefined {
  if (!tool.check) return undefined
  let problem: string | undefined
  try {
    problem = tool.check(args as never, ctx)
  } catch (err) {
    problem = `its check failed (${describeThrown(err)})`
  }
  if (problem === undefined) return undefined
  return `${tool.name}: ${problem}${tool.sideEffect ? ' The call was not executed.' : ''}`
}
