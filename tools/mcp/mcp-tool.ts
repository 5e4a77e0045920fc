/** One MCP tool as a kernel tool: its name, schema and policy, and a handler that calls it. */
import * as z from 'zod/mini'
import { defineTool, type Tool } from '../../src/kernel/tool'
import { callMcpTool, type ListedMcpTool, type McpCallResult } from './mcp-client'
import { jsonSchemaParams } from './json-schema-params'
import { MCP_NAME_SEPARATOR, type McpServerConfig, type McpToolOverride } from './mcp-servers'

export interface McpToolPolicy {
  sideEffect: boolean
  idempotent: boolean
}

/**
 * A server's hints become policy: only `readOnlyHint: true` makes a tool read-only; anything else
 * (`destructiveHint`, or no annotations at all) is a side effect, idempotent only with
 * `idempotentHint: true`. The operator's override can only make it stricter.
 */
export function mcpToolPolicy(
  hints: ListedMcpTool['annotations'],
  override: McpToolOverride | undefined,
): McpToolPolicy {
  const readOnly = hints?.readOnlyHint === true
  return {
    sideEffect: !readOnly || override?.sideEffect === true,
    idempotent: !readOnly && hints?.idempotentHint === true && override?.idempotent !== false,
  }
}

/** The name a server's tool is offered under: `<server>__<tool>`. */
export function mcpToolName(server: string, tool: string): string {
  return `${server}${MCP_NAME_SEPARATOR}${tool}`
}

/** Builds the tool; throws a TypeError when the server's name or schema cannot be used. */
export function buildMcpTool(server: McpServerConfig, listed: ListedMcpTool): Tool {
  const policy = mcpToolPolicy(listed.annotations, server.overrides[listed.name])
  return defineTool({
    name: mcpToolName(server.name, listed.name),
    description:
      listed.description?.trim() || `The "${listed.name}" tool of the ${server.name} MCP server.`,
    params: jsonSchemaParams(listed.inputSchema),
    inputSchema: listed.inputSchema,
    returns: 'What the MCP tool answered: its text content, or its structured content as JSON.',
    ...policy,
    timeoutMs: server.timeoutMs,
    handler: async (args, ctx) => {
      const result = await callMcpTool(
        server,
        { name: listed.name, args, idempotencyKey: ctx.idempotencyKey },
        ctx.signal,
      )
      const text = renderMcpResult(result)
      if (result.isError)
        throw new Error(`the ${server.name} MCP server answered with an error: ${text}`)
      return text
    },
  })
}

/**
 * Stands in for a server that could not be reached when the run started: calling it (or any
 * of that server's tools the run asked for) returns the reason as a tool error.
 */
export function unavailableMcpTool(server: string, name: string, error: string): Tool {
  const message =
    `the ${server} MCP server could not be reached when this run started (${error}), so its ` +
    'tools are not available in this run; go on without them, or tell the user'
  return defineTool({
    name,
    description: `Unavailable: ${message}.`,
    params: z.looseObject({}),
    returns: 'Always a tool error saying why the server is unavailable.',
    handler: () => {
      throw new Error(message)
    },
  })
}

/** Text content as it is, structured content as JSON, other content named but not inlined. */
export function renderMcpResult(result: McpCallResult): string {
  const parts: string[] = []
  for (const item of result.content ?? []) {
    if (item.type === 'text' && typeof item.text === 'string') parts.push(item.text)
    else if (item.type === 'resource' && typeof item.resource?.text === 'string') {
      parts.push(item.resource.text)
    } else if (item.type === 'resource_link' || item.type === 'resource') {
      parts.push(`[resource ${item.resource?.uri ?? (item as { uri?: string }).uri ?? ''}]`)
    } else
      parts.push(`[${item.type} content${item.mimeType ? ` (${item.mimeType})` : ''} not shown]`)
  }
  if (parts.length === 0 && result.structuredContent !== undefined) {
    return JSON.stringify(result.structuredContent)
  }
  return parts.length ? parts.join('\n') : '(no output)'
}
