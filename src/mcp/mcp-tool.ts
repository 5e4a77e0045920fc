/** One MCP tool as a kernel tool: its name, schema and policy, and a handler that calls it. */
import * as z from 'zod/mini'
import { personNeeded } from '../kernel/pending-items'
import { callAskingPerson, type AskingCall } from './mcp-question-call'
import { defineTool, type Tool, type ToolContext } from '../kernel/tool'
import { McpConnectionNeeded } from './oauth/connection-needed'
import { callMcpTool, listMcpTools, type ListedMcpTool, type McpCallResult } from './mcp-client'
import { jsonSchemaParams } from './json-schema-params'
import { stringifyJson } from '../validation/json-walk'
import { MCP_NAME_SEPARATOR, type McpServerConfig, type McpToolOverride } from './mcp-servers'
import type { McpSessions } from './mcp-sessions'

export interface McpToolPolicy {
  sideEffect: boolean
  idempotent: boolean
}

/**
 * A server's hints become policy: only `readOnlyHint: true` makes a tool read-only; anything else
 * (`destructiveHint`, or no annotations at all) is a side effect, idempotent only with
 * `idempotentHint: true`. Hints that contradict each other (read-only and destructive) get the
 * stricter reading: a side effect. The operator's override can only make it stricter.
 */
export function mcpToolPolicy(
  hints: ListedMcpTool['annotations'],
  override: McpToolOverride | undefined,
): McpToolPolicy {
  const readOnly = hints?.readOnlyHint === true && hints.destructiveHint !== true
  return {
    sideEffect: !readOnly || override?.sideEffect === true,
    idempotent: !readOnly && hints?.idempotentHint === true && override?.idempotent !== false,
  }
}

/** The name a server's tool is offered under: `<server>__<tool>`. */
export function mcpToolName(server: string, tool: string): string {
  return `${server}${MCP_NAME_SEPARATOR}${tool}`
}

/**
 * Builds the tool; throws a TypeError when the server's name or schema cannot be used. Its calls
 * share `sessions` (the slice's); without them, each call has a session of its own.
 */
export function buildMcpTool(
  server: McpServerConfig,
  listed: ListedMcpTool,
  sessions?: McpSessions,
): Tool {
  const override = server.overrides[listed.name]
  const policy = mcpToolPolicy(listed.annotations, override)
  return defineMcpTool(server.name, listed, override, server.timeoutMs, async (args, ctx) => {
    let result: McpCallResult
    try {
      const out = await sendCall(server, { name: listed.name, args, ...policy }, ctx, sessions)
      if (!('called' in out)) return out.instead
      result = out.called
    } catch (err) {
      // The server refused for want of a grant (none, a failed refresh, more scope): the call
      // was not taken, and waits on a `connect` item; once granted, it is sent again.
      if (err instanceof McpConnectionNeeded && !ctx.person) return connectItem(err)
      throw err
    }
    const text = renderMcpResult(result)
    if (result.isError)
      throw new Error(`the ${server.name} MCP server answered with an error: ${text}`)
    return text
  })
}

/**
 * Sends a call in `sessions`; in a run's (which hold calls), a question from the server makes the
 * call wait for a person instead (mcp-question-call.ts).
 */
function sendCall(
  server: McpServerConfig,
  call: AskingCall,
  ctx: ToolContext,
  sessions: McpSessions | undefined,
): Promise<{ called: McpCallResult } | { instead: unknown }> {
  if (sessions?.held) return callAskingPerson(server, call, ctx, sessions, sessions.held)
  const { name, args, sideEffect } = call
  const request = { name, args, idempotencyKey: ctx.idempotencyKey, sideEffect }
  return callMcpTool(server, request, ctx.signal, sessions).then((called) => ({ called }))
}

/**
 * A frozen tool of a server taken out of MCP_SERVERS while the run went on: offered as it was
 * (a run's tools never change), and every call answers that the server is gone.
 */
export function removedMcpTool(server: string, listed: ListedMcpTool): Tool {
  return defineMcpTool(server, listed, undefined, undefined, () => {
    throw new Error(
      `the ${server} MCP server is no longer in MCP_SERVERS, so its tools cannot be called; ` +
        'go on without them, or tell the user',
    )
  })
}

function defineMcpTool(
  server: string,
  listed: ListedMcpTool,
  override: McpToolOverride | undefined,
  timeoutMs: number | undefined,
  handler: (args: Record<string, unknown>, ctx: ToolContext) => unknown,
): Tool {
  return defineTool({
    name: mcpToolName(server, listed.name),
    description:
      listed.description?.trim() || `The "${listed.name}" tool of the ${server} MCP server.`,
    params: jsonSchemaParams(listed.inputSchema),
    inputSchema: listed.inputSchema,
    returns: 'What the MCP tool answered: its text content, or its structured content as JSON.',
    ...mcpToolPolicy(listed.annotations, override),
    ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    handler,
  })
}

/**
 * Stands in for a tool the run cannot use: its server could not be reached when the run started,
 * or did not list it. Calling it returns the reason as a tool error.
 */
export function unavailableMcpTool(server: string, name: string, why: string): Tool {
  const message =
    `the ${server} MCP server ${why}, so ${name} is not available in this run; ` +
    'go on without it, or tell the user'
  return defineTool({
    name,
    description: `Unavailable: ${message}.`,
    params: z.looseObject({}),
    returns: 'Always a tool error saying why the tool is unavailable.',
    handler: () => {
      throw new Error(message)
    },
  })
}

/**
 * Stands in for a tool of a server that refused the run when it started for want of a connection
 * (`auth: "oauth"`): a call waits on a `connect` item, then is sent. Treated as a side effect (its
 * real policy was never listed), so it is approved first. `unavailable` (all of a server's tools)
 * has no tool to send: once connected it says the tools come with the run's next turn.
 */
export function connectableMcpTool(
  server: McpServerConfig,
  tool: string,
  sessions?: McpSessions,
): Tool {
  const name = mcpToolName(server.name, tool)
  const all = tool === 'unavailable'
  return defineTool({
    name,
    description: all
      ? `The ${server.name} MCP server needs a connection before its tools can be used; call this to ask for it.`
      : `The "${tool}" tool of the ${server.name} MCP server, which needs a connection first (asked for when called).`,
    params: z.looseObject({}),
    returns: all ? 'Whether the server is connected now.' : 'What the MCP tool answered.',
    sideEffect: !all,
    handler: async (args, ctx) => {
      try {
        if (all) {
          const listed = await listMcpTools(server, ctx.signal, sessions)
          return `the ${server.name} MCP server is connected; its tools (${listed.map((t) => t.name).join(', ')}) are offered from this conversation's next run (continue it)`
        }
        const call = { name: tool, args, sideEffect: true, idempotent: false }
        const out = await sendCall(server, call, ctx, sessions)
        if (!('called' in out)) return out.instead
        const result = out.called
        const text = renderMcpResult(result)
        if (result.isError) {
          throw new Error(`the ${server.name} MCP server answered with an error: ${text}`)
        }
        return text
      } catch (err) {
        if (err instanceof McpConnectionNeeded && !ctx.person) return connectItem(err)
        throw err
      }
    },
  })
}

/** The `connect` item a call waits on (docs/mcp.md#oauth): what to connect, for whom, why. */
function connectItem(err: McpConnectionNeeded) {
  const forWhom = err.owner === 'deployment' ? 'the deployment' : err.owner
  return personNeeded({
    kind: 'connect',
    message:
      `Connect the ${err.server} MCP server for ${forWhom}` +
      (err.scopes ? ` (scopes: ${err.scopes})` : '') +
      (err.reason === 'refresh_failed' ? '; the last grant could not be refreshed' : ''),
    details: {
      server: err.server,
      owner: err.owner,
      scopes: err.scopes,
      reason: err.reason,
      // Who may grant: the person themself, or (the deployment's) a holder of approvals:write.
      grantor: err.owner === 'deployment' ? 'approvals:write' : err.owner,
      link: `/v1/connections/${err.server}/link`,
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
    // Written without recursion: a server's content may nest any depth.
    return stringifyJson(result.structuredContent)
  }
  return parts.length ? parts.join('\n') : '(no output)'
}
