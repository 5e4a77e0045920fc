import { answerFrom, argsFromValue, callFromObject } from './action-object'
import {
  finishCall,
  isFinishName,
  markRepaired,
  type Candidate,
  type ParsedCall,
  type ToolShapes,
} from './call'
import { stripFence } from './json-loose'
import { isPlainObject } from './json-scan'
import { readLooseValue } from './loose-value'
import { cleanThought, nextStopLabel } from './prose'
import { readPythonCall } from './python-call'

const FINAL_ANSWER_LABEL = /^[ \t*#>]*Final[ _]Answer(?:[ \t]+\d+)?[ \t*]*:[ \t*]*/gim
// `Act 1:` is the ReAct paper's own label (its HotpotQA prompts), `Action 1:` its FEVER one.
const ACTION_LABEL = /^[ \t*#>]*Act(?:ion)?(?:[ \t]+\d+)?[ \t*]*:[ \t*]*/gim
// `Thought: … Action: get_weather({…})` on one line: only a call or `Name[x]` counts there.
const INLINE_ACTION =
  /^[ \t*#>]*Thought(?:[ \t]+\d+)?[ \t*]*:[^\n]*?[ \t*]Action[ \t*]*:[ \t*]*(?=[\p{L}_][\p{L}\p{N}_.]*[ \t]*[([])/gimu
const ACTION_INPUT_LABEL = /^[ \t*#>]*Action[ \t_]*Input(?:[ \t]+\d+)?[ \t*]*:[ \t*]*/im
const MAX_ACTION_HEAD = 256
const TOOL_NAME = /^[\p{L}_][\p{L}\p{N}_.-]*$/u
const CALL_HEAD = /^[\p{L}_][\p{L}\p{N}_.]*[ \t]*\(/u
// The ReAct paper's actions: Search[entity], Lookup[keyword], Finish[answer].
const BRACKET_ACTION = /^([\p{L}_][\p{L}\p{N}_]*)\[(.*)\][ \t]*$/u

/**
 * The ReAct family: `Action:` + `Action Input:`, `Action: name(…)`, `Name[x]` (also after
 * `Act 1:`), an inline `Thought: … Action: name(…)`, and `Final Answer:`.
 */
export function reactCandidate(text: string, tools?: ToolShapes): Candidate | undefined {
  let best = reactAction(text, tools)
  for (const c of [inlineAction(text, tools), finalAnswer(text)]) {
    if (c && (!best || c.at < best.at)) best = c
  }
  return best
}

function finalAnswer(text: string): Candidate | undefined {
  FINAL_ANSWER_LABEL.lastIndex = 0
  const m = FINAL_ANSWER_LABEL.exec(text)
  if (!m) return undefined
  const from = m.index + m[0].length
  // The answer ends where a new ReAct label starts (LangChain's MRKL parser does the same).
  const answer = text.slice(from, nextStopLabel(text, from)).trim()
  return {
    at: m.index,
    thought: cleanThought(text.slice(0, m.index)),
    call: finishCall(answer),
    family: 'react',
  }
}

function reactAction(text: string, tools: ToolShapes | undefined): Candidate | undefined {
  ACTION_LABEL.lastIndex = 0
  for (let m = ACTION_LABEL.exec(text); m; m = ACTION_LABEL.exec(text)) {
    const call = reactCall(text, m.index + m[0].length, tools)
    if (call) {
      return { at: m.index, thought: cleanThought(text.slice(0, m.index)), call, family: 'react' }
    }
  }
  return undefined
}

/** The first thought line that ends in `Action: name(…)` or `Action: Name[x]`. */
function inlineAction(text: string, tools: ToolShapes | undefined): Candidate | undefined {
  INLINE_ACTION.lastIndex = 0
  for (let m = INLINE_ACTION.exec(text); m; m = INLINE_ACTION.exec(text)) {
    // The call is read within its line, so a cut-off one cannot run on into the rest.
    const nl = text.indexOf('\n', m.index)
    const line = text.slice(m.index, nl < 0 ? text.length : nl)
    const call = reactCall(line, m[0].length, tools, true)
    if (!call) continue
    const label = line.lastIndexOf('Action', m[0].length)
    const thought = cleanThought(line.slice(0, label).replace(/[ \t*]+$/, ''))
    return { at: m.index, thought, call, family: 'react' }
  }
  return undefined
}

/**
 * Reads what follows an `Action:` label: a call, a name and its input, or nothing usable. Inline
 * (the label mid-line), only a call or `Name[x]` on that line counts.
 */
function reactCall(
  text: string,
  from: number,
  tools: ToolShapes | undefined,
  inline = false,
): ParsedCall | undefined {
  const nl = text.indexOf('\n', from)
  const lineEnd = nl < 0 ? text.length : nl
  const line = text.slice(from, lineEnd).trim()
  const bracket = BRACKET_ACTION.exec(line)
  if (bracket) {
    const [, name, arg] = bracket
    if (isFinishName(name!, tools)) return finishCall(arg!.trim())
    return { name: name!, args: arg!.trim() === '' ? {} : { _raw: arg!.trim() } }
  }
  if (CALL_HEAD.test(line.slice(0, MAX_ACTION_HEAD))) return parenCall(text, from, lineEnd)
  if (inline) return undefined
  // A fenced block after the label (Cohere's ```json [...]```) is JSON: its own family reads it.
  if (line.length > MAX_ACTION_HEAD || line.startsWith('```')) return undefined
  const head = line.replace(/^[`"'*]+|[`"'*]+$/g, '')
  const isFinish = isFinishName(head, tools)
  if (!isFinish && !TOOL_NAME.test(head)) return undefined // prose, a JSON block, or nothing
  const region = text.slice(lineEnd, nextStopLabel(text, lineEnd))
  const label = ACTION_INPUT_LABEL.exec(region)
  const input = inputToArgs(label ? region.slice(label.index + label[0].length) : region)
  if (!input) return undefined // the input is JSON that never closes, or broken JSON
  if (isFinish) return finishCall(answerFrom(input.args, {}))
  // A bare object after `Action: name` may be a whole JSON action rather than its arguments.
  const inner = label ? undefined : callFromObject(input.args, tools)
  if (inner && inner.name === head) return markRepaired(inner, input.repaired)
  return markRepaired({ name: head, args: input.args }, input.repaired)
}

/** `Action: name(…)`: Python-style arguments, one JSON object, or plain text in parentheses. */
function parenCall(text: string, from: number, lineEnd: number): ParsedCall | undefined {
  let start = from
  while (start < lineEnd && (text[start] === ' ' || text[start] === '\t')) start++
  const read = readPythonCall(text, start)
  if (read.ok) return read.call
  if (read.truncated) return undefined
  const line = text.slice(start, lineEnd)
  const open = line.indexOf('(')
  const close = line.lastIndexOf(')')
  if (close < open) return undefined
  const inner = line.slice(open + 1, close).trim()
  if (/^[[{"']/.test(inner)) return undefined // JSON or a string that did not parse
  const name = line.slice(0, open).trim()
  return { name, args: inner === '' ? {} : { _raw: inner } }
}

/** ReAct input text as arguments: a JSON object, a JSON value, or `{ _raw }` for plain text. */
function inputToArgs(
  input: string,
): { args: Record<string, unknown>; repaired?: boolean } | undefined {
  const text = stripFence(input.trim()).trim()
  if (text === '') return { args: {} }
  if (text.startsWith('{') || text.startsWith('｛')) {
    const read = readLooseValue(text, 0)
    if (!read.ok || !isPlainObject(read.value)) return undefined
    return { args: read.value, repaired: read.repaired }
  }
  try {
    return argsFromValue(JSON.parse(text))
  } catch {
    return { args: { _raw: text } } // plain text input is the common ReAct case, not an error
  }
}
