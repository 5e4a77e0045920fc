/**
 * Talking to one MCP server with the official SDK client over Streamable HTTP. Each operation
 * opens its own connection (initialize, the request, close): a run's calls are spread over many
 * Worker invocations, so no session outlives one of them.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { CfWorkerJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/cfworker'
import type { McpServerConfig } from './mcp-servers'

/** A tool as the server listed it: what the run freezes and builds its tool from. */
export interface ListedMcpTool {
  name: string
  description?: string
  inputSchema: Record<string, unknown>
  annotations?: {
    readOnlyHint?: boolean
    destructiveHint?: boolean
    idempotentHint?: boolean
  }
}

/** What a `tools/call` returned (the parts edgeloop reads). */
export interface McpCallResult {
  content?: {
    type: string
    text?: string
    mimeType?: string
    resource?: { uri?: string; text?: string }
  }[]
  structuredContent?: unknown
  isError?: boolean
}

const MAX_PAGES = 20

/** The server's tools (every page of `tools/list`). */
export async function listMcpTools(
  server: McpServerConfig,
  signal?: AbortSignal,
): Promise<ListedMcpTool[]> {
  return withClient(server, signal, async (client, options) => {
    const tools: ListedMcpTool[] = []
    let cursor: string | undefined
    for (let page = 0; page < MAX_PAGES; page++) {
      const res = await client.listTools(cursor ? { cursor } : {}, options)
      for (const t of res.tools) {
        tools.push({
          name: t.name,
          ...(t.description ? { description: t.description } : {}),
          inputSchema: t.inputSchema as Record<string, unknown>,
          ...(t.annotations ? { annotations: pickHints(t.annotations) } : {}),
        })
      }
      cursor = res.nextCursor
      if (!cursor) break
    }
    return tools
  })
}

/** Calls one tool; `idempotencyKey` travels in the call's `_meta`. */
export async function callMcpTool(
  server: McpServerConfig,
  call: { name: string; args: Record<string, unknown>; idempotencyKey: string },
  signal: AbortSignal,
): Promise<McpCallResult> {
  return withClient(server, signal, (client, options) =>
    client.callTool(
      { name: call.name, arguments: call.args, _meta: { idempotencyKey: call.idempotencyKey } },
      undefined,
      options,
    ),
  ) as Promise<McpCallResult>
}

async function withClient<T>(
  server: McpServerConfig,
  signal: AbortSignal | undefined,
  use: (client: Client, options: { signal?: AbortSignal; timeout: number }) => Promise<T>,
): Promise<T> {
  const transport = new StreamableHTTPClientTransport(new URL(server.url), {
    fetch: (input, init) =>
      // The optional GET stream carries only messages the server starts (notifications,
      // sampling), which a run never waits for; not opening it keeps no stream alive in the
      // Durable Object. 405 is what the protocol defines for "no stream here".
      init?.method === 'GET'
        ? Promise.resolve(new Response(null, { status: 405 }))
        : // Looked up at call time, so a test's outbound fake (and nothing else) answers.
          fetch(input, init),
    ...(server.token
      ? { requestInit: { headers: { authorization: `Bearer ${server.token}` } } }
      : {}),
  })
  // The cfworker validator checks output schemas without code generation (Workers forbid eval).
  const client = new Client(
    { name: 'edgeloop', version: '0.1.0' },
    { jsonSchemaValidator: new CfWorkerJsonSchemaValidator() },
  )
  // The SDK's own timeout a little later than the tool's, so dispatch's timeout speaks first.
  const options = { ...(signal ? { signal } : {}), timeout: server.timeoutMs + 1_000 }
  await client.connect(transport, options)
  try {
    return await use(client, options)
  } finally {
    await client.close().catch(() => {})
  }
}

function pickHints(a: Record<string, unknown>): NonNullable<ListedMcpTool['annotations']> {
  const hints: NonNullable<ListedMcpTool['annotations']> = {}
  for (const key of ['readOnlyHint', 'destructiveHint', 'idempotentHint'] as const) {
    if (typeof a[key] === 'boolean') hints[key] = a[key]
  }
  return hints
}
