import { markRepaired, UNPARSABLE, type Candidate, type ParsedCall, type ToolShapes } from './call'
import { isPlainObject } from './json-scan'
import { readLooseValue } from './loose-value'
import { thoughtBefore } from './prose'

export type PythonRead =
  { ok: true; call: ParsedCall; end: number } | { ok: false; at: number; truncated: boolean }

const NAME = /[\p{L}_][\p{L}\p{N}_]*(?:\.[\p{L}_][\p{L}\p{N}_]*)*/uy
const KWARG = /([\p{L}_][\p{L}\p{N}_]*)[ \t]*=(?!=)/uy
const SPACE = /\s*/y

/**
 * A Python-style call at `i`: `name(city="Paris", days=3, verbose=False, tags=["a"])` with
 * Python literal rules, or `name("text")` / `name({…})` with one positional argument. Names and
 * keys may be any Unicode letters. It must close: a call cut off before `)` is not read.
 */
export function readPythonCall(text: string, i: number): PythonRead {
  NAME.lastIndex = i
  const m = NAME.exec(text)
  if (!m) return { ok: false, at: i, truncated: false }
  let j = skip(text, i + m[0].length)
  if (text[j] !== '(') return { ok: false, at: j, truncated: false }
  j++
  const args: Record<string, unknown> = {}
  let positional: unknown
  let count = 0
  let repaired = false
  for (;;) {
    j = skip(text, j)
    if (j >= text.length) return { ok: false, at: j, truncated: true }
    if (text[j] === ')') break
    if (count > 0) {
      if (text[j] !== ',') return { ok: false, at: j, truncated: false }
      j = skip(text, j + 1)
      if (text[j] === ')') break // a trailing comma is Python
    }
    KWARG.lastIndex = j
    const kw = KWARG.exec(text)
    if (!kw && count > 0) return { ok: false, at: j, truncated: false }
    if (kw) j = skip(text, j + kw[0].length)
    const value = readLooseValue(text, j, { python: true })
    if (!value.ok) return value
    if (value.repaired) repaired = true
    if (kw) args[kw[1]!] = value.value
    else positional = value.value
    j = value.end
    count++
  }
  let name = m[0]
  // Llama 3.1 built-in tools are written `brave_search.call(query=…)`.
  if (name.endsWith('.call')) name = name.slice(0, -'.call'.length)
  const callArgs =
    positional === undefined ? args : isPlainObject(positional) ? positional : { _raw: positional }
  return { ok: true, call: markRepaired({ name, args: callArgs }, repaired), end: j + 1 }
}

function skip(text: string, i: number): number {
  SPACE.lastIndex = i
  SPACE.test(text)
  return SPACE.lastIndex
}

const PYTHON_TAG = '<|python_tag|>'
const LINE_CALL = /^[ \t]*(?=[\p{L}_][\p{L}\p{N}_.]*[ \t]*\()/gmu
// Python's own functions: code that calls them is code, not a call to a tool of that name.
const BUILTINS = new Set(
  'print len range input open exec eval sum sorted min max abs round str int float list dict set tuple type help repr isinstance enumerate zip map filter any all'.split(
    ' ',
  ),
)

/**
 * Python-style calls where a model writes them: after Llama's `<|python_tag|>`, as a pythonic
 * list (`[get_weather(city='SF'), …]`, Llama 3.2/4), or at a line start. A line-start call
 * counts when it names an offered tool or is the whole reply; prose like `print(x)`, even fenced
 * as the whole reply, is neither. Code after `<|python_tag|>` goes to the code interpreter.
 */
export function pythonCall(text: string, tools: ToolShapes | undefined): Candidate | undefined {
  const tag = text.indexOf(PYTHON_TAG)
  if (tag >= 0) {
    const at = skip(text, tag + PYTHON_TAG.length)
    const read = readPythonCall(text, at)
    if (read.ok && !isBuiltin(read.call.name, tools)) return candidate(text, tag, read.call)
    // JSON after the tag is the JSON family's; a call cut off is nobody's.
    if (text[at] !== '{' && !(read.ok === false && read.truncated)) {
      return codeCall(text, tag, at, tools)
    }
  }
  const bodyStart = text.length - text.trimStart().length
  const body = unfence(text)
  if (body.startsWith('[')) {
    const read = readPythonCall(body, skip(body, 1))
    if (read.ok && isPythonList(body, read.end)) {
      return { at: bodyStart, thought: '', call: read.call, family: 'python' }
    }
  }
  // Where a call that is the whole reply starts: after blanks and an opening fence.
  const firstAt = skip(text, bodyStart + fenceHead(text.slice(bodyStart)))
  // Reads may overlap (a failed one can run into the next line); the cap keeps them linear.
  let budget = 4 * text.length + 4096
  LINE_CALL.lastIndex = 0
  for (let m = LINE_CALL.exec(text); m && budget > 0; m = LINE_CALL.exec(text)) {
    const at = m.index + m[0].length
    if (m[0].length === 0) LINE_CALL.lastIndex++
    const read = readPythonCall(text, at)
    budget -= (read.ok ? read.end : read.at) - at
    if (!read.ok) continue
    const known = tools?.has(read.call.name) ?? false
    const whole = at === firstAt && !isBuiltin(read.call.name, tools)
    if (known || (whole && isRest(text.slice(read.end)))) {
      return candidate(text, at, read.call)
    }
  }
  return undefined
}

function isBuiltin(name: string, tools: ToolShapes | undefined): boolean {
  return BUILTINS.has(name) && !(tools?.has(name) ?? false)
}

/** End of a Llama code interpreter message: `<|eom_id|>`, or the turn's end. */
const CODE_END = /<\|(?:eom_id|eot_id)\|>/g
// What deployments call a code interpreter tool: `code_interpreter`, `python`, `run_code` ….
const CODE_TOOL = /code[_-]?interp|python|(?:run|exec(?:ute)?)[_-]?code|^code$/i

/**
 * Llama 3.1's built-in code interpreter: the code after `<|python_tag|>` is a call to the offered
 * tool that runs code, the code as its `code` (or only string) parameter, taken as written. Without
 * such a tool the reply is a format error: code is not a call to anything else.
 */
function codeCall(
  text: string,
  tag: number,
  at: number,
  tools: ToolShapes | undefined,
): Candidate | undefined {
  CODE_END.lastIndex = at
  const end = CODE_END.exec(text)
  const code = text.slice(at, end ? end.index : text.length).trim()
  if (code === '') return undefined
  const tool = codeTool(tools)
  const thought = thoughtBefore(text, tag)
  if (!tool) {
    const problem =
      'your reply holds code after <|python_tag|>, but no tool here runs code; call one of the tools listed.'
    return { at: tag, thought, call: { name: UNPARSABLE, args: {} }, family: 'llama', problem }
  }
  return { at: tag, thought, call: { name: tool[0], args: { [tool[1]]: code } }, family: 'llama' }
}

/** The offered tool that runs code, and the parameter the code goes to. */
function codeTool(tools: ToolShapes | undefined): [string, string] | undefined {
  if (!tools) return undefined
  for (const [name, shape] of tools) {
    if (!CODE_TOOL.test(name)) continue
    if (shape.params.code !== undefined) return [name, 'code']
    const strings = Object.keys(shape.params).filter((k) => shape.params[k] === 'string')
    if (strings.length === 1) return [name, strings[0]!]
  }
  return undefined
}

/** Nothing but blanks and a closing fence. */
function isRest(tail: string): boolean {
  const t = tail.trim()
  return t === '' || t === '```'
}

function candidate(text: string, at: number, call: ParsedCall): Candidate {
  return { at, thought: thoughtBefore(text, at), call, family: 'python' }
}

/** After the first call of a `[…]` list: more calls, then `]` and nothing else. */
function isPythonList(body: string, end: number): boolean {
  let j = skip(body, end)
  while (body[j] === ',') {
    const next = readPythonCall(body, skip(body, j + 1))
    if (!next.ok) return false
    j = skip(body, next.end)
  }
  return body[j] === ']' && body.slice(j + 1).trim() === ''
}

/** The body of a ```python / ```json / ``` fence that is the whole text, else the text. */
function unfence(text: string): string {
  const t = text.trim()
  const head = fenceHead(t)
  if (head === 0 || !t.endsWith('```')) return t
  return t.slice(head, t.length - 3).trim()
}

function fenceHead(text: string): number {
  const m = /^```[\w-]*[ \t]*\n/.exec(text)
  return m ? m[0].length : 0
}
