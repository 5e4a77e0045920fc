import type { AgentSnapshot } from './agent-schema'
import type { Protocol, ToolSchema } from './model'
import { TEXT_PROTOCOL_FORMAT } from './parse/index'
import type { ToolRegistry } from './registry'
import { promptFormatOf } from './prompt-format'
import { approxTokens } from './tokens'
import { TOOL_OUTPUT_RULE } from './tool-output'

/** The native protocol's finish tool, offered when a run has an output schema. */
export const FINAL_ANSWER_TOOL = 'final_answer'

const NATIVE_RULES_1 =
  'You are an agent that solves the task step by step. Think briefly, then call tools to gather ' +
  'facts; never invent observations. Tools marked as side effects need a person to approve each ' +
  'call.'
const NATIVE_RULES = `${NATIVE_RULES_1} ${TOOL_OUTPUT_RULE}`
const NATIVE_FINISH =
  ' When you have the answer, reply with the final answer as plain text and no tool call.'
const NATIVE_FINISH_STRUCTURED =
  ` When you have the answer, call ${FINAL_ANSWER_TOOL} with it as "answer" (its parameters ` +
  'give the schema the answer must match), and no other tool in that reply.'

const TEXT_SYSTEM_HEAD_1 =
  'You are an agent that solves the task step by step. Each reply is one step: a short thought ' +
  'and exactly one action. Never invent observations: they come back to you after each action. ' +
  'Tools marked as side effects need a person to approve each call.'
const TEXT_SYSTEM_HEAD = `${TEXT_SYSTEM_HEAD_1} ${TOOL_OUTPUT_RULE}`

/** The text protocol's format with an output schema: finish's `answer` is the object itself. */
export function structuredTextFormat(schema: Record<string, unknown>): string {
  return [
    'Reply with one JSON object in a ```json fence, nothing after it:',
    '```json',
    '{"thought": "<your reasoning>", "action": "<tool name>", "args": {<tool arguments>}}',
    '```',
    'When you know the answer, finish with the answer as a JSON value (not a string) that',
    'matches the output schema below:',
    '```json',
    '{"thought": "<your reasoning>", "action": "finish", "args": {"answer": <the answer>}}',
    '```',
    '## Output schema',
    JSON.stringify(schema),
  ].join('\n')
}

/** The format a text-protocol `[FormatError]` repeats for this run. */
export function textFormatOf(agent: AgentSnapshot): string {
  return agent.output ? structuredTextFormat(agent.output) : TEXT_PROTOCOL_FORMAT
}

/** What every request of a run sends before its history and task, and what it costs. */
export interface RunHead {
  system: { text: string; native: string }
  /** The native protocol's tools: the registry's, plus the finish tool with an output schema. */
  tools: ToolSchema[]
  /** Estimated tokens: the system message, and natively the tool schemas too. */
  tokens: { text: number; native: number }
  /** Tokens of the tool specs alone. */
  specTokens: { text: number; native: number }
}

// Built once per registry and agent version: the same for every step of every run using them.
const heads = new WeakMap<ToolRegistry, Map<string, RunHead>>()

/**
 * The system prompts of a run: the agent's instructions first, then the kernel's own rules
 * (format, side effects, tools), byte-identical for every step, and across resumes (the
 * instructions and schema come from the run's snapshot, never from the definition).
 */
export function runHead(registry: ToolRegistry, agent: AgentSnapshot): RunHead {
  let byAgent = heads.get(registry)
  if (!byAgent) heads.set(registry, (byAgent = new Map()))
  const format = promptFormatOf(agent)
  const key = `${format}:${agent.instructions === null && agent.output === null ? '' : agent.version}`
  let head = byAgent.get(key)
  if (!head) {
    head = buildHead(registry, agent)
    byAgent.set(key, head)
  }
  return head
}

function buildHead(registry: ToolRegistry, agent: AgentSnapshot): RunHead {
  const first = agent.instructions ? `${agent.instructions.trim()}\n\n` : ''
  const output = agent.output
  // Prompt format 1 (runs saved before tool output was framed) had no rule about the frame.
  const legacy = promptFormatOf(agent) === 1
  const text = `${first}${legacy ? TEXT_SYSTEM_HEAD_1 : TEXT_SYSTEM_HEAD}\n\n${textFormatOf(agent)}${finishToolNote(registry)}\n\n## Tools\n\n${registry.textSpec()}`
  const native = `${first}${legacy ? NATIVE_RULES_1 : NATIVE_RULES}${output ? NATIVE_FINISH_STRUCTURED : NATIVE_FINISH}`
  const tools = output
    ? [...registry.openaiTools(), finalAnswerTool(output)]
    : registry.openaiTools()
  const nativeSpec = approxTokens(JSON.stringify(tools))
  const textSpec = approxTokens(registry.textSpec())
  // Role and framing of the system message: as step-messages.ts counts every message.
  const framing = 4
  return {
    system: { text, native },
    tools,
    tokens: {
      text: framing + approxTokens(text),
      native: framing + approxTokens(native) + nativeSpec,
    },
    specTokens: { text: textSpec, native: nativeSpec },
  }
}

/**
 * A deployment's own `finish` tool is that tool, so the finish action above would call it; the
 * model is told the other way to finish, which no tool name can take.
 */
function finishToolNote(registry: ToolRegistry): string {
  const tool = registry.names().find((n) => n.toLowerCase() === 'finish')
  if (!tool) return ''
  return `\n\nHere \`${tool}\` is one of the tools: the action "${tool}" calls it. When you know the answer, finish with a last line \`Final Answer: <final answer>\` instead.`
}

/** The native finish tool: its one parameter, `answer`, is the output schema. */
function finalAnswerTool(schema: Record<string, unknown>): ToolSchema {
  const { $schema: _draft, ...answer } = schema
  return {
    type: 'function',
    function: {
      name: FINAL_ANSWER_TOOL,
      description: 'Ends the run with its final answer, which must match the schema of "answer".',
      parameters: {
        type: 'object',
        properties: { answer },
        required: ['answer'],
        additionalProperties: false,
      },
    },
  }
}

/** Which of the run's system prompts a request in `protocol` sends. */
export function systemOf(head: RunHead, protocol: Protocol): string {
  return protocol === 'native' ? head.system.native : head.system.text
}
