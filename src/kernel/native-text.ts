import { FINISH, parseOutput, UNPARSABLE, type Family, type ParsedCall } from './parse/index'
import type { ToolRegistry } from './registry'
import { toolShapesOf } from './tool-shapes'

/** What the text of a native reply without `tool_calls` is. */
export type NativeText =
  | { kind: 'call'; thought: string; call: ParsedCall; family: Family }
  | { kind: 'finish'; answer: string }
  | { kind: 'answer' }
  | { kind: 'format_error'; problem: string }

// Families whose syntax cannot be prose: a call in them is a call even to an unknown tool.
const STRUCTURED = new Set<Family>([
  'json',
  'hermes',
  'qwen3-coder',
  'glm',
  'llama',
  'mistral',
  'deepseek',
  'kimi',
  'harmony',
  'xml',
])

/**
 * Reads a native reply's content the way the text protocol would. Servers without a tool parser
 * for the model (vLLM, llama.cpp, Ollama) pass its tool call through as text; and in `auto`, a
 * provider that accepts `tools` may still answer in the text protocol's JSON. A call naming an
 * offered tool is that call; a reply that is only a call (no prose before it) is a call even to
 * an unknown tool, so dispatch names the real ones; a text-protocol finish is its answer.
 * Anything else is the final answer as written.
 */
export function readNativeText(text: string, registry: ToolRegistry): NativeText {
  const parsed = parseOutput(text, { tools: toolShapesOf(registry) })
  const { call, family } = parsed
  // Code for an interpreter the run does not offer is neither a call nor an answer.
  if (parsed.problem) return { kind: 'format_error', problem: parsed.problem }
  if (call.name === UNPARSABLE || family === undefined) return { kind: 'answer' }
  if (call.name === FINISH) {
    const answer = typeof call.args.answer === 'string' ? call.args.answer.trim() : ''
    return answer ? { kind: 'finish', answer } : { kind: 'answer' }
  }
  const offered = registry.get(call.name) !== undefined
  if (offered || (STRUCTURED.has(family) && parsed.thought === '')) {
    return { kind: 'call', thought: parsed.thought, call, family }
  }
  return { kind: 'answer' }
}
