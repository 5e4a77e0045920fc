import type { ModelResponse, NativeToolCall } from './model'
import { FINISH, parseArgsStrict, parseArgsTolerant, parseOutput, UNPARSABLE } from './parse/index'
import type { ToolRegistry } from './registry'
import { newCall } from './calls'
import { type Call } from './state'
import { readNativeText } from './native-text'
import { toolShapesOf } from './tool-shapes'
import { structuredAnswer } from './structured-answer'
import { FINAL_ANSWER_TOOL } from './system-prompt'

/**
 * What a model reply says: calls to make, the final answer, or a reply that cannot be used. With
 * an output schema, a finish carries the validated `output`, and a format error says whether it
 * was the answer that failed the schema (`output`: the run then ends `output_invalid`).
 */
export type Reading =
  | { kind: 'action'; thought: string; calls: Call[] }
  | { kind: 'finish'; thought: string; answer: string; output?: unknown }
  | { kind: 'format_error'; thought: string; problem: string; output?: boolean }

/** The run's output schema, or null for a plain text answer. */
type Output = Record<string, unknown> | null

/** A finish read against the run's output schema (none: the plain answer as it is). */
function finishWith(thought: string, raw: unknown, output: Output): Reading {
  if (!output) {
    return { kind: 'finish', thought, answer: typeof raw === 'string' ? raw : String(raw) }
  }
  const read = structuredAnswer(output, raw)
  if (!read.ok) return { kind: 'format_error', thought, problem: read.problem, output: true }
  return { kind: 'finish', thought, answer: read.answer, output: read.output }
}

/** Calls run per model turn; the rest are answered with a [ToolError]. */
export const MAX_CALLS_PER_STEP = 16

/** A text-protocol reply: one JSON action block in plain text, read by the tolerant parser. */
export function readTextReply(
  text: string,
  i: number,
  registry: ToolRegistry,
  output: Output = null,
): Reading {
  const parsed = parseOutput(text, { tools: toolShapesOf(registry) })
  const { name, args } = parsed.call
  if (name === UNPARSABLE && output && text.trim()) {
    // With an output schema, a reply without an action is most likely a plain-text answer.
    return {
      kind: 'format_error',
      thought: parsed.thought,
      problem:
        parsed.problem ??
        'no action could be read from your reply; a plain-text answer is not enough: finish with an "answer" that is a JSON value matching the output schema.',
      output: true,
    }
  }
  if (name === UNPARSABLE) {
    return {
      kind: 'format_error',
      thought: parsed.thought,
      problem:
        parsed.problem ??
        (text.trim() ? 'no action could be read from your reply.' : 'your reply was empty.'),
    }
  }
  if (name === FINISH && output) return finishWith(parsed.thought, args.answer, output)
  if (name === FINISH) {
    const answer = typeof args.answer === 'string' ? args.answer.trim() : ''
    if (!answer) {
      return {
        kind: 'format_error',
        thought: parsed.thought,
        problem: 'finish needs a non-empty "answer" string.',
      }
    }
    return { kind: 'finish', thought: parsed.thought, answer }
  }
  const call = newCall(`s${i}c0`, name, args)
  // Side effects need exact JSON, as in the native protocol: a repaired object never runs one.
  if (parsed.call.repaired && registry.get(name)?.sideEffect) {
    call.argsError =
      'the action was not valid JSON (it needed repairs to read: quotes, commas or brackets)'
  }
  return { kind: 'action', thought: parsed.thought, calls: [call] }
}

/**
 * A native reply whose content is all there is: a tool call written as text (a server with no
 * tool parser for the model passes it through) is that call, marked `fromText`, and
 * a side effect's arguments must have needed no repair, as for any side-effect call. A reply that
 * is only a call is never the final answer; other text is.
 */
function readNativeContent(
  text: string,
  i: number,
  registry: ToolRegistry,
  output: Output,
): Reading {
  const read = readNativeText(text, registry)
  if (read.kind === 'format_error')
    return { kind: 'format_error', thought: '', problem: read.problem }
  if (read.kind === 'answer') return finishWith('', text, output)
  if (read.kind === 'finish') return finishWith('', read.answer, output)
  const call = newCall(`s${i}c0`, read.call.name, read.call.args)
  call.fromText = read.family
  if (read.call.repaired && registry.get(read.call.name)?.sideEffect) {
    call.argsError =
      'the call written in your text was not valid JSON (it needed repairs to read: quotes, commas or brackets)'
  }
  return { kind: 'action', thought: read.thought, calls: [call] }
}

/** A native reply: `tool_calls` with JSON argument strings, or the final answer as text. */
export function readNativeReply(
  response: ModelResponse,
  i: number,
  registry: ToolRegistry,
  taken: ReadonlySet<string>,
  output: Output = null,
): Reading {
  const thought = (response.text ?? '').trim()
  const toolCalls = response.toolCalls ?? []
  if (!toolCalls.length) {
    if (!thought)
      return { kind: 'format_error', thought, problem: 'your reply had no text and no tool call.' }
    return readNativeContent(thought, i, registry, output)
  }
  if (output && toolCalls.some((tc) => tc.function.name === FINAL_ANSWER_TOOL)) {
    return readFinalAnswer(thought, toolCalls, output)
  }
  // Call ids key observation handles, idempotency keys and approvals for the whole run, so they
  // must be unique in the run, not just in this reply.
  const calls: Call[] = []
  for (let k = 0; k < toolCalls.length; k++) {
    const tc = toolCalls[k]!
    // Some providers send empty or repeated ids; each result must pair with exactly one call.
    const used = !tc.id || (k > 0 && hasId(calls, tc.id)) || taken.has(tc.id)
    const id = used ? `s${i}c${k}` : tc.id
    // Side effects parse strictly: a repaired argument object never becomes a side effect.
    const raw = tc.function.arguments
    const parsed = registry.get(tc.function.name)?.sideEffect
      ? parseArgsStrict(raw)
      : parseArgsTolerant(raw)
    const call = newCall(id, tc.function.name, parsed.ok ? parsed.value : {}, raw.length)
    call.rawArgs = raw
    if (!parsed.ok) call.argsError = parsed.error
    if (k >= MAX_CALLS_PER_STEP) {
      // A step is stored as one row (2 MB at most): extra calls are answered, never run.
      call.argsError = `too many calls in one turn (at most ${MAX_CALLS_PER_STEP}); send the rest in the next turn.`
    }
    calls.push(call)
  }
  return { kind: 'action', thought, calls }
}

function hasId(calls: Call[], id: string): boolean {
  for (let k = 0; k < calls.length; k++) if (calls[k]!.id === id) return true
  return false
}

/** A native reply calling the finish tool: its `answer` is checked against the schema. */
function readFinalAnswer(thought: string, toolCalls: NativeToolCall[], output: Output): Reading {
  if (toolCalls.length > 1) {
    return {
      kind: 'format_error',
      thought,
      problem: `${FINAL_ANSWER_TOOL} must be the only tool call of its reply.`,
      output: true,
    }
  }
  const parsed = parseArgsStrict(toolCalls[0]!.function.arguments)
  if (!parsed.ok) {
    return {
      kind: 'format_error',
      thought,
      problem: `the arguments of ${FINAL_ANSWER_TOOL} were not a JSON object (${parsed.error}).`,
      output: true,
    }
  }
  return finishWith(thought, parsed.value.answer, output)
}
