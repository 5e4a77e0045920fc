import { callFromObject, MAY_BE_ACTION, thoughtKey } from './action-object'
import {
  FINISH,
  resolveName,
  shapeArgs,
  UNPARSABLE,
  type Candidate,
  type Family,
  type ParsedCall,
  type ToolShapes,
} from './call'
import { jsonAction } from './json-family'
import { isPlainObject, MAX_LOOSE_JSON_CHARS } from './json-loose'
import { pythonCall } from './python-call'
import { reactCandidate } from './react'
import { taggedCall } from './tagged-calls'
import { splitThinking } from './thinking'
import { tokenCall } from './token-calls'

export interface ParsedOutput {
  thought: string
  call: ParsedCall
  /** The format family the call was read in; absent when nothing was read. */
  family?: Family
  /** With an UNPARSABLE call, why, when the parser can say more than "no action". */
  problem?: string
}

export interface ParseOptions {
  /**
   * The offered tools. With them, a Python-style call at a line start or a `{"name": …}` object
   * without arguments counts when it names one of them, names match case-insensitively, text
   * arguments are typed by the schema, and plain ReAct input goes to a tool's only string
   * parameter.
   */
  tools?: ToolShapes
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

/**
 * Reads a thought and one action from model text, in any format family docs/models.md lists (JSON
 * actions, Hermes/Qwen/GLM tags, Llama, Mistral, DeepSeek, Kimi, harmony, XML, Cohere, ReAct,
 * Python-style calls). The first complete, valid call wins; nothing is ever auto-closed. Never
 * throws; returns `UNPARSABLE` as the call name when nothing usable is there.
 */
export function parseOutput(text: string, opts: ParseOptions = {}): ParsedOutput {
  if (!CALL_CHARACTER.test(text)) return noCall(text)
  const tools = opts.tools
  try {
    const canonical = canonicalReply(text, tools)
    if (canonical) return canonical
    const { thinking, body } = splitThinking(text)
    let best: Candidate | undefined
    for (const c of [
      jsonAction(body, tools),
      taggedCall(body),
      tokenCall(body),
      reactCandidate(body, tools),
      pythonCall(body, tools),
    ]) {
      if (c && (!best || c.at < best.at)) best = c
    }
    if (best) return finish(best, thinking, tools)
  } catch {
    // Parsing must never end a run (docs/architecture.md#step-machine); anything unforeseen is a format error.
  }
  return noCall(text)
}

/**
 * A character every family's call starts with or needs: a JSON object's brace (ASCII or
 * full-width; the fenced canonical reply is one too), a tag or special token's `<`, Mistral's
 * `[TOOL_CALLS]` and a pythonic list's `[`, a Python-style call's `(`, a ReAct label's `:`.
 * Text with none of them (a plain final answer) holds no call, and the families' parsers are not
 * run on it: on a 20-step native run they read the answer at about a run's tenth of its kernel
 * CPU warm, and compiling them was about a sixth of its first run (docs/development.md#kernel-performance).
 */
const CALL_CHARACTER = /[{\uff5b<[(:]/

/** The reading of text in which no family found a call. */
function noCall(text: string): ParsedOutput {
  return { thought: text.trim(), call: { name: UNPARSABLE, args: {} } }
}

function finish(best: Candidate, thinking: string, tools: ToolShapes | undefined): ParsedOutput {
  const thought =
    thinking && best.thought ? `${thinking}\n${best.thought}` : thinking || best.thought
  const { call } = best
  if (call.name === UNPARSABLE) {
    return best.problem ? { thought, call, problem: best.problem } : { thought, call }
  }
  if (call.name === FINISH) return { thought, call, family: best.family }
  const name = resolveName(call.name, tools)
  const args = shapeArgs(call.args, tools?.get(name), best.stringArgs === true)
  const out: ParsedCall = call.repaired ? { name, args, repaired: true } : { name, args }
  return { thought, call: out, family: best.family }
}

const FENCE_OPEN = '```json\n'
const FENCE_CLOSE = '\n```'

/**
 * The reply TEXT_PROTOCOL_FORMAT asks for, exactly: one fenced JSON action object and nothing
 * else. Read with one JSON.parse; it gives what the general scan would, and anything else
 * (prose, repairs, several objects) takes the general path (npm run bench: the kernel's text
 * loop stays within 2x of a hand-written one).
 */
function canonicalReply(text: string, tools: ToolShapes | undefined): ParsedOutput | undefined {
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
  const call = callFromObject(value, tools)
  if (!call || call.repaired) return undefined
  return finish({ at: 0, thought: thoughtKey(value), call, family: 'json' }, '', tools)
}
