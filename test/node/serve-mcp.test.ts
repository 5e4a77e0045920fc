/**
 * `/mcp` (docs/serving.md#mcp) through the MCP SDK's own client against the Worker as deployed:
 * every agent a tool, a call a run, long runs as tasks, and what a bad request is told.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  GetTaskResultSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js'
import { mcpClient, startMcpWorker, TOKENS, type McpWorker } from './serve-mcp/mcp-worker.ts'

let worker: McpWorker

beforeAll(async () => {
  worker = await startMcpWorker()
}, 120_000)
afterAll(() => worker?.stop())

describe('/mcp with the MCP SDK client', () => {
  it('lists every agent as a tool, with its output schema', async () => {
    const client = await mcpClient(worker.url, TOKENS.alpha)
    expect(client.getServerVersion()).toMatchObject({ name: 'edgeloop' })
    const { tools } = await client.listTools()
    const triage = tools.find((t) => t.name === 'triage')
    expect(triage).toMatchObject({
      description: expect.stringContaining('Triages'),
      inputSchema: { type: 'object', required: ['task'] },
      outputSchema: { type: 'object', required: expect.arrayContaining(['severity']) },
      execution: { taskSupport: 'optional' },
    })
    expect(tools.map((t) => t.name)).toContain('default')
    await client.close()
  })

  it('calls an agent and answers its structured output', async () => {
    const client = await mcpClient(worker.url, TOKENS.alpha)
    const output = {
      severity: 'sev2',
      component: 'checkout',
      summary: 'Checkout fails for EU cards.',
    }
    const result = await client.callTool({
      name: 'triage',
      arguments: { task: `finish with ${JSON.stringify(output)}` },
    })
    expect(result.isError).toBeFalsy()
    expect(result.structuredContent).toEqual(output)
    expect(JSON.parse((result.content as { text: string }[])[0]!.text)).toEqual(output)
    await client.close()
  })
})
