import {
  isPlainObject,
  MAX_LOOSE_JSON_CHARS,
  parseJsonObjectLoose,
  scanJsonObjects,
  stripFence,
} from './json-loose'
import { scanJson, type JsonSpan } from './json-scan'

/** The call name `parseOutput` returns when the text holds no usable action. */
export const UNPARSABLE = '__unparsable__'
/** The call name that ends a run; its `args.answer` is the final answer. */
export const FINISH = 'finish'

export interface ParsedCall {
  name: string
  args: Record<string, unknown>
  /**
   * True when the action needed repairs (single quotes, trailing commas, …) to parse. Such
   * arguments must not become a side-effect request (DESIGN §3, approvals).
   */
  repaired?: boolean
}

export interface ParsedOutput {
  thought: string
  call: ParsedCall
}

/** Format instructions for text-protocol models, repeated in `[FormatError]` observations. */
export const TEXT_PROTOCOL_FORMAT = [
  'Reply with one JSON object in a ```json fence, nothing after it:',
  '```json',
  '{"thought": "<your reasoning>", "action": "<tool name>", "args": {<tool arguments>}}',
  '```',
  'When you know the answer, finish with:',
  '```json',
  '{"thought": "<your reasoning>", "action": "finish", "args": {"answer": "<final answer>"}}',
  '```',
].join('\n')

const ACTION_KEYS = ['action', 'tool', 'tool_name', 'function', 'name'] as const
const ARGS_KEYS = [
  'args',
  'arguments',
  'parameters',
  'input',
  'action_input',
  'tool_input',
] as const
const THOUGHT_KEYS = ['thought', 'thoughts', 'reasoning'] as const
// Every action object holds one of these keys (ACTION_KEYS, or final_answer).
const MAY_BE_ACTION = /action|tool|name|function|final_answer/
const FINISH_NAME = /^(?:finish|final[ _-]?answer)$/i
const MAX_ACTION_HEAD = 256
const TOOL_NAME = /^[A-Za-z_][\w.-]*$/
const TOOL_NAME_PAREN = /^([A-Za-z_][\w.-]*)[ \t]*\(/
// Labels sit at a line start, optionally after Markdown emphasis, headings or quotes.
const FINAL_ANSWER_LABEL = /^[ \t*#>]*Final[ _]Answer[ \t*]*:[ \t*]*/gim
const ACTION_LABEL = /^[ \t*#>]*Action[ \t*]*:[ \t*]*/gim
const ACTION_INPUT_LABEL = /^[ \t*#>]*Action[ \t_]*Input[ \t*]*:[ \t*]*/im
const STOP_LABEL = /^[ \t*#>]*(?:Observation|Thought|Action|Final[ _]Answer)[ \t*]*:/gim
const THOUGHT_LABEL = /^[ \t*#>]*Thought[ \t*]*:[ \t*]*/i

interface Candidate {
  /** Where the action starts in the text; the earliest candidate wins. */
  at: number
  thought: string
  call: ParsedCall
}

/**
 * Reads a thought and one action from model text: JSON (fenced, bare, `<tool_call>`), ReAct
 * (`Action:` / `Action Input:`) or `Final Answer:`. Never throws; returns `UNPARSABLE` as the
 * call name when nothing usable is there.
 */
export function parseOutput(text: string): ParsedOutput {
  try {
    const canonical = canonicalReply(text)
    if (canonical) return canonical

    const { spans, unclosedAt } = scanJson(text)
    const found = [
      jsonAction(text, spans, unclosedAt),
      finalAnswer(text, spans),
      reactAction(text, spans),
    ]
    let best: Candidate | undefined
    for (const c of found) if (c && (!best || c.at < best.at)) best = c
    if (best) return { thought: best.thought, call: best.call }
  } catch {
    // Parsing must never end a run (DESIGN §1.2); anything unforeseen is a format error.
  }
  return { thought: text.trim(), call: { name: UNPARSABLE, args: {} } }
}

const FENCE_OPEN = '```json\n'
const FENCE_CLOSE = '\n```'

/**
 * The reply TEXT_PROTOCOL_FORMAT asks for, exactly: one fenced JSON action object and nothing
 * else. Read with one JSON.parse; it gives what the general scan below would, and anything else
 * (prose, repairs, several objects) takes the general path.
 */
function canonicalReply(text: string): ParsedOutput | undefined {
  const t = text.trim()
  if (!t.startsWith(FENCE_OPEN) || !t.endsWith(FENCE_CLOSE)) return undefined
  const body = t.slice(FENCE_OPEN.length, t.length - FENCE_CLOSE.length)
  // The general path's limits: no action key written in the raw text (an escaped `\u0061ction`
  // is data), or more than the repair limit, and it reads no action.
  if (body.length > MAX_LOOSE_JSON_CHARS || !MAY_BE_ACTION.test(body)) return undefined
  if (body.includes('```')) return undefined
  let value: unknown
  try {
    value = JSON.parse(body)
  } catch {
    return undefined
  }
  if (!isPlainObject(value)) return undefined
  const call = callFromObject(value, 0)
  if (!call || call.repaired) return undefined
  return { thought: thoughtKey(value), call }
}

function jsonAction(text: string, spans: JsonSpan[], unclosedAt: number): Candidate | undefined {
  for (const span of spans) {
    // Inside a cut-off object: `{"action": "a", "args": {"name": "b"}` must not run tool "b".
    if (unclosedAt >= 0 && span.start > unclosedAt) break
    if (!MAY_BE_ACTION.test(span.text)) continue // skip parsing data objects in long prose
    const parsed = parseJsonObjectLoose(span.text)
    if (!parsed) continue
    const call = callFromObject(parsed.value, 0)
    if (!call) continue
    const thought = thoughtBefore(text, span.start) || thoughtKey(parsed.value)
    return { at: span.start, thought, call: markRepaired(call, parsed.repaired) }
  }
  return undefined
}

function finalAnswer(text: string, spans: JsonSpan[]): Candidate | undefined {
  const m = firstLabelOutside(FINAL_ANSWER_LABEL, text, spans)
  if (!m) return undefined
  const answer = text.slice(m.index + m[0].length).trim()
  return { at: m.index, thought: cleanThought(text.slice(0, m.index)), call: finishCall(answer) }
}

function reactAction(text: string, spans: JsonSpan[]): Candidate | undefined {
  ACTION_LABEL.lastIndex = 0
  for (let m = ACTION_LABEL.exec(text); m; m = ACTION_LABEL.exec(text)) {
    if (insideSpan(m.index, spans)) continue
    const call = reactCall(text, m.index + m[0].length)
    if (call) return { at: m.index, thought: cleanThought(text.slice(0, m.index)), call }
  }
  return undefined
}

/** Reads `name`, `name(args)` or `Final Answer` after an `Action:` label, plus its input. */
function reactCall(text: string, from: number): ParsedCall | undefined {
  const nl = text.indexOf('\n', from)
  const lineEnd = nl < 0 ? text.length : nl
  // A name is short; only a `name(…)` line may be long, and its head is all we need here.
  const line = text.slice(from, Math.min(lineEnd, from + MAX_ACTION_HEAD))
  const paren = TOOL_NAME_PAREN.exec(line.trimStart())
  if (paren) {
    const open = from + line.indexOf('(')
    const { args, repaired } = parenArgs(text.slice(open + 1, nextStopLabel(text, lineEnd)))
    return markRepaired({ name: paren[1]!, args }, repaired)
  }
  if (lineEnd - from > MAX_ACTION_HEAD) return undefined
  const head = line.trim().replace(/^[`"'*]+|[`"'*]+$/g, '')
  const isFinish = FINISH_NAME.test(head)
  if (!isFinish && !TOOL_NAME.test(head)) return undefined // prose, a JSON block, or nothing
  const regionEnd = nextStopLabel(text, lineEnd)
  const region = text.slice(lineEnd, regionEnd)
  const label = ACTION_INPUT_LABEL.exec(region)
  const input = label ? region.slice(label.index + label[0].length) : region
  const { args, repaired } = inputToArgs(input)
  if (isFinish) return finishCall(answerFrom(args, {}))
  // A bare object after `Action: name` may be a whole JSON action rather than its arguments.
  const inner = label ? undefined : callFromObject(args, 0)
  if (inner && inner.name === head) return markRepaired(inner, repaired)
  return markRepaired({ name: head, args }, repaired)
}

/** Arguments written as `name(…)`: an object, a JSON value, or plain text. */
function parenArgs(rest: string): { args: Record<string, unknown>; repaired?: boolean } {
  const body = rest.trimStart()
  if (body.startsWith('{')) {
    const span = scanJsonObjects(body)[0]
    return inputToArgs(span?.start === 0 ? span.text : body)
  }
  const lineEnd = body.indexOf('\n')
  const line = lineEnd < 0 ? body : body.slice(0, lineEnd)
  const close = line.lastIndexOf(')')
  return inputToArgs(close < 0 ? line : line.slice(0, close))
}

/** Turns ReAct input text into arguments: a JSON object, or `{ _raw }` for anything else. */
function inputToArgs(input: string): { args: Record<string, unknown>; repaired?: boolean } {
  const text = stripFence(input.trim()).trim()
  if (text === '') return { args: {} }
  if (text.startsWith('{')) {
    const span = scanJsonObjects(text)[0]
    const parsed = span?.start === 0 ? parseJsonObjectLoose(span.text) : undefined
    return parsed ? { args: parsed.value, repaired: parsed.repaired } : { args: { _raw: text } }
  }
  try {
    return argsFromValue(JSON.parse(text))
  } catch {
    return { args: { _raw: text } } // plain text input is the common ReAct case, not an error
  }
}

/** The value of an args key, normalised to an object. */
function argsFromValue(value: unknown): { args: Record<string, unknown>; repaired?: boolean } {
  if (value === undefined || value === null) return { args: {} }
  if (isPlainObject(value)) return { args: value }
  if (typeof value === 'string') {
    if (value.trim() === '') return { args: {} }
    const parsed = parseJsonObjectLoose(value)
    return parsed ? { args: parsed.value, repaired: parsed.repaired } : { args: { _raw: value } }
  }
  return { args: { _raw: value } }
}

/** The call an object describes, or undefined when it is not an action object. */
function callFromObject(obj: Record<string, unknown>, depth: number): ParsedCall | undefined {
  let name: string | undefined
  for (const key of ACTION_KEYS) {
    if (!Object.hasOwn(obj, key)) continue
    const value = obj[key]
    // OpenAI style `{"function": {"name": …, "arguments": …}}`, one level deep.
    if (isPlainObject(value) && depth === 0) return callFromObject(value, 1)
    if (typeof value !== 'string' || value.trim() === '') return undefined
    name = value.trim()
    break
  }
  if (name === undefined) {
    return Object.hasOwn(obj, 'final_answer') ? finishCall(answerFrom({}, obj)) : undefined
  }
  const key = ARGS_KEYS.find((k) => Object.hasOwn(obj, k))
  const { args, repaired } = argsFromValue(key === undefined ? undefined : obj[key])
  if (FINISH_NAME.test(name)) return finishCall(answerFrom(args, obj))
  return markRepaired({ name, args }, repaired)
}

function answerFrom(args: Record<string, unknown>, obj: Record<string, unknown>): string {
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

function finishCall(answer: string): ParsedCall {
  return { name: FINISH, args: { answer } }
}

function markRepaired(call: ParsedCall, repaired: boolean | undefined): ParsedCall {
  return repaired ? Object.assign({}, call, { repaired: true }) : call
}

function thoughtKey(obj: Record<string, unknown>): string {
  for (const key of THOUGHT_KEYS) {
    const value = obj[key]
    if (typeof value === 'string') return value.trim()
  }
  return ''
}

/** The prose before an action, without the fence, tag or label that introduces it. */
function thoughtBefore(text: string, at: number): string {
  let prose = text.slice(0, at).trimEnd()
  prose = stripSuffix(prose, /```[\w-]*$/)
  prose = stripSuffix(prose, /<tool_call>$/i)
  prose = stripSuffix(prose, /(?:^|\n)[ \t*#>]*Action[ \t*]*:$/i)
  return cleanThought(prose)
}

// Only the end of the prose can hold an introducer; matching there keeps long prose cheap.
const SUFFIX_WINDOW = 256

function stripSuffix(prose: string, suffix: RegExp): string {
  const from = Math.max(0, prose.length - SUFFIX_WINDOW)
  const m = suffix.exec(prose.slice(from))
  return m ? prose.slice(0, from + m.index).trimEnd() : prose
}

function cleanThought(prose: string): string {
  return prose.trim().replace(THOUGHT_LABEL, '').trim()
}

function nextStopLabel(text: string, from: number): number {
  STOP_LABEL.lastIndex = from
  const m = STOP_LABEL.exec(text)
  return m ? m.index : text.length
}

function firstLabelOutside(label: RegExp, text: string, spans: JsonSpan[]) {
  label.lastIndex = 0
  for (let m = label.exec(text); m; m = label.exec(text)) {
    if (!insideSpan(m.index, spans)) return m
  }
  return undefined
}

/** Binary search: is `index` inside one of the (sorted, disjoint) spans? */
function insideSpan(index: number, spans: JsonSpan[]): boolean {
  let lo = 0
  let hi = spans.length - 1
  while (lo <= hi) {
    const mid = (lo + hi) >> 1
    const span = spans[mid]!
    if (index < span.start) hi = mid - 1
    else if (index >= span.end) lo = mid + 1
    else return true
  }
  return false
}
