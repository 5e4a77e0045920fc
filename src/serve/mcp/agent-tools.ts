import type { Tool } from '@modelcontextprotocol/sdk/types.js'
import type { Agent } from '../../config'

/** What every agent's tool takes: the task, and optionally the run whose conversation it continues. */
export const AGENT_INPUT_SCHEMA = {
  type: 'object',
  properties: {
    task: { type: 'string', minLength: 1, description: 'What the agent is asked to do.' },
    conversation: {
      type: 'string',
      description:
        "The id of a finished run (a task id this token got before) whose conversation this call continues; its history comes first in the new run's context.",
    },
  },
  required: ['task'],
  additionalProperties: false,
} as const

/** The outputSchema of an agent without one of its own: its answer, as text. */
const ANSWER_SCHEMA = {
  type: 'object',
  properties: { answer: { type: 'string', description: "The agent's final answer." } },
  required: ['answer'],
}

/**
 * An agent as an MCP tool (docs/serving.md#mcp): its name and description, the input above, and
 * its output schema as `outputSchema`. MCP wants an object there, so an agent whose answer is not
 * an object has it wrapped as `{ output }` (structuredOf says the same of each answer).
 */
export function agentTool(agent: Agent): Tool {
  return {
    name: agent.name,
    title: agent.name,
    description: agent.description,
    inputSchema: AGENT_INPUT_SCHEMA as unknown as Tool['inputSchema'],
    outputSchema: outputSchemaOf(agent) as Tool['outputSchema'],
    // Runs may wait for people; a client that can keep a task should (docs/serving.md#tasks).
    execution: { taskSupport: 'optional' },
    annotations: { title: agent.name, openWorldHint: true },
  }
}

function outputSchemaOf(agent: Agent): Record<string, unknown> {
  const schema = agent.outputSchema
  if (!schema) return ANSWER_SCHEMA
  if (isObjectSchema(schema)) return schema
  return { type: 'object', properties: { output: schema }, required: ['output'] }
}

function isObjectSchema(schema: Record<string, unknown>): boolean {
  return schema.type === 'object'
}

/** The answer of a finished run of `agent` as the tool's `structuredContent`. */
export function structuredOf(
  agent: Pick<Agent, 'outputSchema'> | null,
  answer: string,
  output: unknown,
): Record<string, unknown> {
  const schema = agent?.outputSchema
  if (!schema || output === undefined) return { answer }
  if (isObjectSchema(schema)) return output as Record<string, unknown>
  return { output }
}
