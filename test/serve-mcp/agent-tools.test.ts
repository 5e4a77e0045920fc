import { describe, expect, it } from 'vitest'
import { agentTool, structuredOf } from '../../src/serve/mcp/agent-tools'
import type { Agent } from '../../src/config'

const agent = (outputSchema: Record<string, unknown> | null) =>
  ({ name: 'a', description: 'An agent.', outputSchema }) as Agent

const OBJECT = { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] }
const LIST = { type: 'array', items: { type: 'string' } }

describe('an agent as an MCP tool', () => {
  it.each([
    ['an object schema, as is', OBJECT, OBJECT],
    [
      'another schema, wrapped as { output }',
      LIST,
      { type: 'object', properties: { output: LIST }, required: ['output'] },
    ],
    [
      'none: { answer }',
      null,
      { type: 'object', properties: { answer: expect.any(Object) }, required: ['answer'] },
    ],
  ])('outputSchema from %s', (_, schema, expected) => {
    expect(agentTool(agent(schema)).outputSchema).toEqual(expected)
  })

  it('takes a task and an optional conversation, nothing else', () => {
    expect(agentTool(agent(null)).inputSchema).toMatchObject({
      type: 'object',
      required: ['task'],
      additionalProperties: false,
      properties: { task: { type: 'string' }, conversation: { type: 'string' } },
    })
  })

  it.each([
    ['an object output, as is', OBJECT, { n: 1 }, { n: 1 }],
    ['another output, as { output }', LIST, ['x'], { output: ['x'] }],
    ['a text answer, as { answer }', null, undefined, { answer: 'the answer' }],
  ])('structuredContent of %s', (_, schema, output, expected) => {
    expect(structuredOf(agent(schema), 'the answer', output)).toEqual(expected)
  })
})
