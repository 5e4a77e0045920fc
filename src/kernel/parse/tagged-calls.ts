import type { Candidate, Family } from './call'
import { isPlainObject } from './json-scan'
import { readLooseValue } from './loose-value'
import { thoughtBefore } from './prose'

/**
 * Calls in XML-like tags whose arguments are text, not JSON:
 * - Qwen3-Coder `<tool_call><function=name><parameter=k>v</parameter></function></tool_call>`
 *   (the outer tag is optional);
 * - Llama 3.1 custom tools `<function=name>{"k": "v"}</function>`;
 * - GLM-4.5 `<tool_call>name<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>`;
 * - XML `<function_calls><invoke name="…"><parameter name="…">…</parameter></invoke>`.
 * Each must close; values are strings, typed later by the tool's schema.
 */
export function taggedCall(text: string): Candidate | undefined {
  let best: Candidate | undefined
  for (const find of [functionTag, glmCall, invokeCall]) {
    const c = find(text)
    if (c && (!best || c.at < best.at)) best = c
  }
  return best
}

const FUNCTION_OPEN = /<function=([^>\s]+)>/g

function functionTag(text: string): Candidate | undefined {
  FUNCTION_OPEN.lastIndex = 0
  let close = -2
  for (let m = FUNCTION_OPEN.exec(text); m; m = FUNCTION_OPEN.exec(text)) {
    const name = m[1]!
    const bodyAt = m.index + m[0].length
    if (close !== -1 && close < bodyAt) close = text.indexOf('</function>', bodyAt)
    // A body ends at its close tag, or where the next call starts (then it is broken).
    const next = text.indexOf('<function=', bodyAt)
    const end = close < 0 ? next : next < 0 ? close : Math.min(close, next)
    const body = text.slice(bodyAt, end < 0 ? text.length : end)
    const at = wrapperStart(text, m.index)
    const lead = body.search(/\S/)
    if (lead >= 0 && body[lead] === '{') {
      const read = readLooseValue(body, lead)
      if (!read.ok || !isPlainObject(read.value)) continue
      const call = { name, args: read.value, ...(read.repaired ? { repaired: true } : {}) }
      return { at, thought: thoughtBefore(text, at), call, family: 'llama' }
    }
    if (close < 0 || end !== close) continue // a Qwen3-Coder call cut off before </function>
    const args = textParams(body, /<parameter=([^>\n]+)>/g, '</parameter>')
    const call = { name, args }
    return { at, thought: thoughtBefore(text, at), call, family: 'qwen3-coder', stringArgs: true }
  }
  return undefined
}

const TOOL_CALL = '<tool_call>'
const GLM_NAME = /^\s*([^\s<>{}[\]"']+)\s*(?=<arg_key>|<\/tool_call>)/

function glmCall(text: string): Candidate | undefined {
  let close = -2
  for (let at = text.indexOf(TOOL_CALL); at >= 0; at = text.indexOf(TOOL_CALL, at + 1)) {
    const bodyAt = at + TOOL_CALL.length
    if (close < bodyAt) close = text.indexOf('</tool_call>', bodyAt)
    if (close < 0) return undefined // cut off: nothing after it closes either
    const next = text.indexOf(TOOL_CALL, bodyAt)
    if (next >= 0 && next < close) continue // broken: the next call starts before this closes
    const body = text.slice(bodyAt, close + '</tool_call>'.length)
    const m = GLM_NAME.exec(body)
    if (!m) continue
    const args: Record<string, unknown> = {}
    const pair = /<arg_key>([\s\S]*?)<\/arg_key>\s*<arg_value>([\s\S]*?)<\/arg_value>/y
    let j = m[0].length
    let ok = true
    for (;;) {
      j += /^\s*/.exec(body.slice(j, j + 256))![0].length
      if (body.startsWith('</tool_call>', j)) break
      pair.lastIndex = j
      const p = pair.exec(body)
      if (!p) {
        ok = false
        break
      }
      args[p[1]!.trim()] = p[2]!.trim()
      j = pair.lastIndex
    }
    if (!ok) continue
    const call = { name: m[1]!, args }
    return { at, thought: thoughtBefore(text, at), call, family: 'glm', stringArgs: true }
  }
  return undefined
}

const INVOKE_OPEN = /<invoke\s+name\s*=\s*["']([^"']+)["'][^>]*>/g

function invokeCall(text: string): Candidate | undefined {
  INVOKE_OPEN.lastIndex = 0
  let close = -2
  for (let m = INVOKE_OPEN.exec(text); m; m = INVOKE_OPEN.exec(text)) {
    const bodyAt = m.index + m[0].length
    if (close < bodyAt) close = text.indexOf('</invoke>', bodyAt)
    if (close < 0) return undefined
    const next = text.indexOf('<invoke', bodyAt)
    if (next >= 0 && next < close) continue
    const args = textParams(
      text.slice(bodyAt, close),
      /<parameter\s+name\s*=\s*["']([^"']+)["'][^>]*>/g,
      '</parameter>',
    )
    const at = wrapperStart(text, m.index)
    const call = { name: m[1]!, args }
    return { at, thought: thoughtBefore(text, at), call, family: 'xml' as Family, stringArgs: true }
  }
  return undefined
}

/**
 * `<parameter…>value</parameter>` pairs of a closed body. One newline on each side of a value is
 * layout, not data.
 */
function textParams(body: string, open: RegExp, closeTag: string): Record<string, unknown> {
  const opens: RegExpExecArray[] = []
  open.lastIndex = 0
  for (let m = open.exec(body); m; m = open.exec(body)) opens.push(m)
  const args: Record<string, unknown> = {}
  for (let k = 0; k < opens.length; k++) {
    const m = opens[k]!
    const from = m.index + m[0].length
    const region = body.slice(from, k + 1 < opens.length ? opens[k + 1]!.index : body.length)
    const close = region.indexOf(closeTag)
    // Without a close tag the value runs to the next parameter, or to the call's own close.
    const value = close < 0 ? region : region.slice(0, close)
    args[m[1]!.trim()] = value.replace(/^\r?\n/, '').replace(/\r?\n$/, '')
  }
  return args
}

const WRAPPERS = ['<tool_call>', '<function_calls>', '<minimax:tool_call>']

/** The start of the wrapper tag right before a call, so prose before it is the thought. */
function wrapperStart(text: string, at: number): number {
  const before = text.slice(Math.max(0, at - 64), at)
  for (const w of WRAPPERS) {
    const k = before.lastIndexOf(w)
    if (k >= 0 && before.slice(k + w.length).trim() === '') return at - before.length + k
  }
  return at
}
