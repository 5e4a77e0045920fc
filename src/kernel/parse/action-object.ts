import {
  finishCall,
  isFinishName,
  markRepaired,
  resolveName,
  type ParsedCall,
  type ToolShapes,
} from './call'
import { isPlainObject, parseJsonObjectLoose } from './json-loose'

// In the order models use them; a key whose value is empty or not a name falls through.
const ACTION_KEYS = ['action', 'tool', 'tool_name', 'name', 'function'] as const
const ARGS_KEYS = [
  'args',
  'arguments',
  'parameters',
  'action_input',
  'input',
  'tool_input',
] as const
const THOUGHT_KEYS = ['thought', 'thoughts', 'reasoning'] as const
// Keys an object that is only `{"name": …}` may also hold and still be a call without arguments.
const CALL_ONLY_KEYS = new Set(['name', 'type', 'id', ...THOUGHT_KEYS])

/** Every action object holds one of these words in its raw text; a cheap pre-filter. */
export const MAY_BE_ACTION = /action|tool|name|function|final_answer/

/**
 * The call an object describes, or undefined when it is not an action object. `{"name": …}` is
 * the one weak alias (data objects have names too): without an arguments key it counts only when
 * it names an offered tool or holds nothing else.
 */
export function callFromObject(
  obj: Record<string, unknown>,
  tools?: ToolShapes,
  depth = 0,
): ParsedCall | undefined {
  const list = obj.tool_calls
  if (depth < 2 && Array.isArray(list) && isPlainObject(list[0])) {
    const inner = callFromObject(list[0], tools, depth + 1)
    if (inner) return inner
  }
  let name: string | undefined
  let nameKey = ''
  for (const key of ACTION_KEYS) {
    if (!Object.hasOwn(obj, key)) continue
    const value = obj[key]
    // OpenAI style `{"function": {"name": …, "arguments": …}}`, a level or two deep.
    if (isPlainObject(value) && depth < 2 && key !== 'name') {
      const inner = callFromObject(value, tools, depth + 1)
      if (inner) return inner
      continue
    }
    if (typeof value !== 'string' || value.trim() === '') continue
    name = value.trim()
    nameKey = key
    break
  }
  if (name === undefined) {
    return Object.hasOwn(obj, 'final_answer') ? finishCall(answerFrom({}, obj)) : undefined
  }
  const argsKey = argumentsKey(obj)
  const finish = isFinishName(name, tools)
  if (nameKey === 'name' && argsKey === undefined && !finish) {
    const known = tools?.has(resolveName(name, tools)) ?? false
    if (!known && Object.keys(obj).some((k) => !CALL_ONLY_KEYS.has(k))) return undefined
  }
  const { args, repaired } = argsFromValue(argsKey === undefined ? undefined : obj[argsKey])
  if (finish) return finishCall(answerFrom(args, obj))
  return markRepaired({ name, args }, repaired)
}

/**
 * Which key holds the arguments: the first that holds any, else the first present. A reply that
 * writes `"args": {}` beside `"arguments": {…}` means the filled one.
 */
function argumentsKey(obj: Record<string, unknown>): string | undefined {
  let present: string | undefined
  for (const key of ARGS_KEYS) {
    if (!Object.hasOwn(obj, key)) continue
    const value = obj[key]
    if (value === null || value === '') continue
    if (isFilled(value)) return key
    present ??= key
  }
  return present
}

function isFilled(value: unknown): boolean {
  if (isPlainObject(value)) return Object.keys(value).length > 0
  if (Array.isArray(value)) return value.length > 0
  if (typeof value === 'string') return !/^\s*(?:\{\s*\}|\[\s*\])?\s*$/.test(value)
  return true
}

/** The value of an args key, normalised to an object. */
export function argsFromValue(value: unknown): {
  args: Record<string, unknown>
  repaired?: boolean
} {
  if (value === undefined || value === null) return { args: {} }
  if (isPlainObject(value)) return { args: value }
  if (typeof value === 'string') {
    if (value.trim() === '') return { args: {} }
    // Arguments as a JSON-encoded string (OpenAI style) are decoded.
    const parsed = value.trimStart().startsWith('{') ? parseJsonObjectLoose(value) : undefined
    return parsed ? { args: parsed.value, repaired: parsed.repaired } : { args: { _raw: value } }
  }
  return { args: { _raw: value } }
}

/** The final answer an object or its arguments hold. */
export function answerFrom(args: Record<string, unknown>, obj: Record<string, unknown>): string {
  const values = Object.values(args)
  const answer =
    args.answer ??
    args._raw ??
    obj.final_answer ??
    obj.answer ??
    (values.length === 1 ? values[0] : undefined)
  if (answer === undefined || answer === null) return ''
  return typeof answer === 'string' ? answer : JSON.stringify(answer)
}

export function thoughtKey(obj: Record<string, unknown>): string {
  for (const key of THOUGHT_KEYS) {
    const value = obj[key]
    if (typeof value === 'string') return value.trim()
  }
  return ''
}
