/**
 * `MODEL=script`: a local model for trying tools, MCP tools and approvals without a provider.
 * The run's task is its script, in a tiny format (docs/trying-tools.md):
 *
 *   call `word_count` with {"text": "one two"}, then call calculator with {"expression": "2*3"},
 *   then finish with Counted and multiplied.
 *
 * Each `call` is one step; `finish with` ends the run with the rest of the task as the answer
 * (without it, the run ends with the last call's observation). Both protocols are spoken.
 */
import { ModelError } from '../errors/model-error'
import { FINAL_ANSWER_TOOL } from '../kernel/system-prompt'
import { unframeObservation } from '../kernel/tool-output'
import type { ChatMessage, ModelRequest, ModelResponse } from '../kernel/model'
import { ScriptedModel } from './scripted-model'

export const SCRIPT_MODEL_NAME = 'script'

export type TaskScriptStep =
  { kind: 'call'; tool: string; args: Record<string, unknown> } | { kind: 'finish'; answer: string }

const FORMAT =
  'call <tool> with {json arguments}, then call <tool> with {…}, then finish with <answer>'
const TOOL = /^`?([\p{L}_][\p{L}\p{N}_-]*(?:__[\p{L}\p{N}_-]+)?)`?/u
const SEPARATOR = /^(?:[\s,;.]|then\b|and\b)+/i

/** The steps a task spells out; throws a ModelError naming the format when it spells none. */
export function parseTaskScript(task: string): TaskScriptStep[] {
  const steps: TaskScriptStep[] = []
  let rest = task.trim()
  while ((rest = rest.replace(SEPARATOR, '')) !== '') {
    const finish = /^finish\s+with\b\s*/i.exec(rest)
    if (finish) {
      steps.push({ kind: 'finish', answer: rest.slice(finish[0].length).trim() })
      return steps
    }
    const call = /^call\s+/i.exec(rest)
    const tool = call ? TOOL.exec(rest.slice(call[0].length)) : null
    if (!call || !tool) {
      throw invalid(`expected "call <tool>" or "finish with" at "${rest.slice(0, 40)}"`)
    }
    rest = rest.slice(call[0].length + tool[0].length).trimStart()
    let args: Record<string, unknown> = {}
    const withArgs = /^with\s*/i.exec(rest)
    if (withArgs) {
      const json = leadingObject(rest.slice(withArgs[0].length))
      if (!json) throw invalid(`the arguments of ${tool[1]} must be one JSON object`)
      args = json.value
      rest = rest.slice(withArgs[0].length + json.length)
    }
    steps.push({ kind: 'call', tool: tool[1]!, args })
  }
  if (!steps.length) throw invalid('the task is empty')
  return steps
}

/** The model: replays the task's script, one step per turn. */
export function taskScriptModel(): ScriptedModel {
  return new ScriptedModel(scriptTurn, { name: SCRIPT_MODEL_NAME })
}

function scriptTurn(request: ModelRequest): ModelResponse | undefined {
  const taskAt = request.messages.findLastIndex(
    (m) => m.role === 'user' && m.content.startsWith('Task: '),
  )
  const task = request.messages[taskAt]
  if (!task) throw invalid('the request holds no task')
  const steps = parseTaskScript(String(task.content).slice('Task: '.length))
  const later = request.messages.slice(taskAt + 1)
  const turn = later.filter((m) => m.role === 'assistant').length
  const step = steps[turn]
  if (step?.kind === 'call') return callReply(step, turn, request.protocol)
  // A finish the run did not take (an answer that fails the output schema) is given again, as a
  // model sure of its answer would, until the run ends `output_invalid`.
  const finish = steps.find((s) => s.kind === 'finish')
  if (finish && turn >= steps.length - 1) return finishReply(finish.answer, turn, request)
  // Ran out of steps without a finish: end with what the last call observed.
  if (turn === steps.length) return finishReply(lastObservation(later), turn, request)
  return undefined
}

function callReply(
  step: Extract<TaskScriptStep, { kind: 'call' }>,
  turn: number,
  protocol: ModelRequest['protocol'],
): ModelResponse {
  const thought = `Step ${turn + 1} of the script: call ${step.tool}.`
  const args = JSON.stringify(step.args)
  if (protocol === 'text') {
    return reply(`Thought: ${thought}\nAction: ${step.tool}\nAction Input: ${args}`, 'stop')
  }
  return {
    ...reply(thought, 'tool_calls'),
    toolCalls: [
      {
        id: `call_script_${turn + 1}`,
        type: 'function',
        function: { name: step.tool, arguments: args },
      },
    ],
  }
}

function finishReply(answer: string, turn: number, request: ModelRequest): ModelResponse {
  const text = answer || '(the script gave no answer)'
  if (request.protocol === 'text') {
    return reply(`Thought: step ${turn + 1} of the script: finish.\nFinal Answer: ${text}`, 'stop')
  }
  // A run that asks for a structured answer offers the finish tool: the answer goes through it,
  // as JSON when it reads as JSON (`finish with {"severity": "high"}`).
  if (!request.tools?.some((t) => t.function.name === FINAL_ANSWER_TOOL)) return reply(text, 'stop')
  return {
    ...reply(`Step ${turn + 1} of the script: finish.`, 'tool_calls'),
    toolCalls: [
      {
        id: `call_script_${turn + 1}`,
        type: 'function',
        function: {
          name: FINAL_ANSWER_TOOL,
          arguments: JSON.stringify({ answer: jsonOrText(text) }),
        },
      },
    ],
  }
}

function jsonOrText(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

function reply(text: string, finishReason: ModelResponse['finishReason']): ModelResponse {
  // Rough counts (4 characters a token): the trace and the budgets get plausible numbers.
  return {
    text,
    finishReason,
    usage: { promptTokens: 0, completionTokens: Math.ceil(text.length / 4) },
    model: SCRIPT_MODEL_NAME,
  }
}

function lastObservation(messages: ChatMessage[]): string {
  const last = messages.findLast((m) => m.role === 'tool' || m.role === 'user')
  return last ? unframeObservation(String(last.content).replace(/^Observation:\n/, '')) : ''
}

/** A JSON object at the start of `text`, and how many characters it took. */
function leadingObject(text: string): { value: Record<string, unknown>; length: number } | null {
  if (!text.startsWith('{')) return null
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (inString) {
      if (c === '\\') i++
      else if (c === '"') inString = false
    } else if (c === '"') inString = true
    else if (c === '{') depth++
    else if (c === '}' && --depth === 0) {
      try {
        const value = JSON.parse(text.slice(0, i + 1))
        return value && typeof value === 'object' && !Array.isArray(value)
          ? { value, length: i + 1 }
          : null
      } catch {
        return null
      }
    }
  }
  return null
}

function invalid(detail: string): ModelError {
  return new ModelError(
    `MODEL=script could not read the task as a script (${detail}); write: ${FORMAT}`,
    {
      code: 'script_invalid',
    },
  )
}
