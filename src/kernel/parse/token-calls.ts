import { finishCall, type Candidate, type Family, type ParsedCall } from './call'
import { isPlainObject } from './json-scan'
import { readLooseValue } from './loose-value'
import { cleanThought, thoughtBefore } from './prose'

/**
 * Calls framed by a model's special tokens, arguments in JSON:
 * - Mistral `[TOOL_CALLS]name{…}` and `[TOOL_CALLS]name[ARGS]{…}` (the `[TOOL_CALLS][{…}]` list
 *   is read as JSON);
 * - DeepSeek V3/R1 `<｜tool▁call▁begin｜>function<｜tool▁sep｜>name` + a ```json block, and V3.1
 *   `<｜tool▁call▁begin｜>name<｜tool▁sep｜>{…}`;
 * - Kimi K2 `<|tool_call_begin|>functions.name:0<|tool_call_argument_begin|>{…}`;
 * - gpt-oss harmony `<|channel|>commentary to=functions.name … <|message|>{…}<|call|>`, and its
 *   final channel as the final answer.
 * The JSON must be complete; a missing end token after it is only a stop token the server ate.
 */
export function tokenCall(text: string): Candidate | undefined {
  let best: Candidate | undefined
  for (const find of [mistralCall, deepseekCall, kimiCall, harmonyMessage]) {
    const c = find(text)
    if (c && (!best || c.at < best.at)) best = c
  }
  return best
}

const TOOL_CALLS = '[TOOL_CALLS]'
const MISTRAL_NAME = /[\p{L}_][\p{L}\p{N}_.-]*/uy

function mistralCall(text: string): Candidate | undefined {
  for (let at = text.indexOf(TOOL_CALLS); at >= 0; at = text.indexOf(TOOL_CALLS, at + 1)) {
    let j = skipSpace(text, at + TOOL_CALLS.length)
    MISTRAL_NAME.lastIndex = j
    const m = MISTRAL_NAME.exec(text)
    if (!m) continue // `[TOOL_CALLS][{…}]`: the JSON family reads it
    j = skipSpace(text, j + m[0].length)
    const id = /^\[CALL_ID\][^[{]*/.exec(text.slice(j, j + 128))
    if (id) j = skipSpace(text, j + id[0].length)
    if (text.startsWith('[ARGS]', j)) j = skipSpace(text, j + '[ARGS]'.length)
    const call = jsonCall(text, j, m[0])
    if (call) return candidate(text, at, call, 'mistral')
  }
  return undefined
}

const DS_BEGIN = /<[|｜]tool▁call▁begin[|｜]>/g
const DS_SEP = /<[|｜]tool▁sep[|｜]>/

function deepseekCall(text: string): Candidate | undefined {
  DS_BEGIN.lastIndex = 0
  for (let m = DS_BEGIN.exec(text); m; m = DS_BEGIN.exec(text)) {
    const from = m.index + m[0].length
    const sep = DS_SEP.exec(text.slice(from, from + 256))
    if (!sep) continue
    const head = text.slice(from, from + sep.index).trim()
    let j = from + sep.index + sep[0].length
    let name = head
    if (head === 'function') {
      // V3/R1: the name ends the line, then the arguments in a ```json fence.
      const nl = text.indexOf('\n', j)
      if (nl < 0 || nl - j > 256) continue
      name = text.slice(j, nl).trim()
      j = skipSpace(text, nl)
      if (text.startsWith('```', j)) {
        const fenceEnd = text.indexOf('\n', j)
        if (fenceEnd < 0) continue
        j = fenceEnd
      }
    }
    if (!name) continue
    const call = jsonCall(text, skipSpace(text, j), name)
    if (call) return candidate(text, m.index, call, 'deepseek')
  }
  return undefined
}

const KIMI_BEGIN = '<|tool_call_begin|>'
const KIMI_ARGS = '<|tool_call_argument_begin|>'
const KIMI_ID = /^(?:functions\.)?([\p{L}_][\p{L}\p{N}_-]*(?:\.[\p{L}_][\p{L}\p{N}_-]*)*):\d+$/u

function kimiCall(text: string): Candidate | undefined {
  for (let at = text.indexOf(KIMI_BEGIN); at >= 0; at = text.indexOf(KIMI_BEGIN, at + 1)) {
    const from = at + KIMI_BEGIN.length
    const args = text.slice(from, from + 256).indexOf(KIMI_ARGS)
    if (args < 0) continue
    // The id is `functions.name:index`; anything else is not a call the template writes.
    const id = KIMI_ID.exec(text.slice(from, from + args).trim())
    if (!id) continue
    const call = jsonCall(text, skipSpace(text, from + args + KIMI_ARGS.length), id[1]!)
    if (call) return candidate(text, at, call, 'kimi')
  }
  return undefined
}

const MESSAGE = '<|message|>'
const HEADER_START = /<\|(?:start|end|call|return)\|>/g
const RECIPIENT = /\bto=(?!assistant\b)(?:functions\.)?([^\s<]+)/
const MESSAGE_END = /<\|(?:end|call|return|start)\|>/g

/** The first harmony message that is a function call or the final answer. */
function harmonyMessage(text: string): Candidate | undefined {
  let headerFrom = 0
  for (let k = text.indexOf(MESSAGE); k >= 0; k = text.indexOf(MESSAGE, k + 1)) {
    const header = text.slice(headerFrom, k)
    if (!header.includes('<|channel|>') && !header.includes('to=')) {
      headerFrom = k + MESSAGE.length
      continue
    }
    HEADER_START.lastIndex = 0
    let start = headerFrom
    for (let h = HEADER_START.exec(header); h; h = HEADER_START.exec(header)) {
      start = headerFrom + h.index + (h[0] === '<|start|>' ? 0 : h[0].length)
    }
    const bodyAt = k + MESSAGE.length
    MESSAGE_END.lastIndex = bodyAt
    const end = MESSAGE_END.exec(text)
    const body = text.slice(bodyAt, end ? end.index : text.length)
    headerFrom = end ? end.index : text.length
    const recipient = RECIPIENT.exec(header)
    if (recipient) {
      const call = jsonCall(body, skipSpace(body, 0), recipient[1]!)
      if (call) return { at: start, thought: harmonyThought(text, start), call, family: 'harmony' }
    } else if (/<\|channel\|>\s*final\b/.test(header)) {
      const call = finishCall(body.trim())
      return { at: start, thought: harmonyThought(text, start), call, family: 'harmony' }
    }
    // A message without an end token runs to the end of the text: nothing follows it.
    if (!end) return undefined
  }
  return undefined
}

/** Harmony prose before a message (commentary preambles), without its tokens and headers. */
function harmonyThought(text: string, at: number): string {
  const prose = text
    .slice(0, at)
    .replace(/<\|start\|>\s*assistant|<\|channel\|>\s*\w+|<\|[a-z_]+\|>/g, ' ')
  return cleanThought(prose.replace(/[ \t]+/g, ' '))
}

function jsonCall(text: string, at: number, name: string): ParsedCall | undefined {
  if (text[at] !== '{') return undefined
  const read = readLooseValue(text, at)
  if (!read.ok || !isPlainObject(read.value)) return undefined
  return read.repaired ? { name, args: read.value, repaired: true } : { name, args: read.value }
}

function candidate(text: string, at: number, call: ParsedCall, family: Family): Candidate {
  return { at, thought: thoughtBefore(text, at), call, family }
}

function skipSpace(text: string, i: number): number {
  while (i < text.length && /\s/.test(text[i]!)) i++
  return i
}
