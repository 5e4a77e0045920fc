/**
 * Turn builders for kernel tests on top of the real `ScriptedModel` (src/llm/scripted-model.ts),
 * plus a fake clock: time comes into the kernel only through `now`, so tests control it.
 */
import type { ModelResponse, ModelUsage, NativeToolCall } from '../../src/kernel/index'

export { ScriptedModel } from '../../src/llm/scripted-model'

/** A text-protocol turn: one fenced JSON action. */
export function textAction(
  action: string,
  args: Record<string, unknown>,
  thought = `use ${action}`,
  usage?: ModelUsage,
): ModelResponse {
  const text = '```json\n' + JSON.stringify({ thought, action, args }) + '\n```'
  return { text, finishReason: 'stop', ...(usage ? { usage } : {}) }
}

/** A text-protocol final answer. */
export function textFinish(answer: string, usage?: ModelUsage): ModelResponse {
  return textAction('finish', { answer }, 'done', usage)
}

/** One native tool call: arguments as an object (serialized) or as the raw string sent. */
export function nativeCall(
  name: string,
  args: Record<string, unknown> | string,
  id = `call_${name}`,
): NativeToolCall {
  const text = typeof args === 'string' ? args : JSON.stringify(args)
  return { id, type: 'function', function: { name, arguments: text } }
}

/** A native turn with tool calls (and an optional thought). */
export function nativeCalls(
  calls: NativeToolCall[],
  thought: string | null = null,
  usage?: ModelUsage,
): ModelResponse {
  return {
    text: thought,
    toolCalls: calls,
    finishReason: 'tool_calls',
    ...(usage ? { usage } : {}),
  }
}

/** A native final answer: plain text, no tool call. */
export function nativeAnswer(answer: string, usage?: ModelUsage): ModelResponse {
  return { text: answer, finishReason: 'stop', ...(usage ? { usage } : {}) }
}

/** A clock that moves only when told to. */
export function fakeClock(start = 1_700_000_000_000): {
  now: () => number
  advance(ms: number): void
} {
  let t = start
  return {
    now: () => t,
    advance(ms: number) {
      t += ms
    },
  }
}

/** An observation as the model reads it: in the tool-output frame, written out literally. */
export function framed(tool: string, observation: string): string {
  return `<tool_output tool="${tool}">\n${observation}\n</tool_output>`
}
