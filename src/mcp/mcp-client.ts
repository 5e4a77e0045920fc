/**
 * Talking to one MCP server: its tool list and its tool calls, each in the slice's session with
 * the server (mcp-sessions.ts). A session that breaks is dropped; a read-only request is sent once
 * more in a new session, a side effect never (docs/architecture.md#mcp-tools).
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import type { McpServerConfig } from './mcp-servers'
import { sessionFailure, sideEffectSessionError } from './mcp-session-failure'
import { withMcpSessions, type McpSessions } from './mcp-sessions'

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
  sessions?: McpSessions,
): Promise<ListedMcpTool[]> {
  return inSession(server, sessions, signal, { resend: true }, async (client, options) => {
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

/**
 * Calls one tool; `idempotencyKey` travels in the call's `_meta`. A side effect is sent once: if
 * its session breaks, the error says whether the server took it.
 */
export async function callMcpTool(
  server: McpServerConfig,
  call: {
    name: string
    args: Record<string, unknown>
    idempotencyKey: string
    sideEffect: boolean
    /**
     * The SDK's own limit for the request, when not the server's `timeout_ms` (a call that may
     * be held open on a question: the caller's signal bounds each wait instead).
     */
    sdkTimeoutMs?: number
  },
  signal: AbortSignal,
  sessions?: McpSessions,
): Promise<McpCallResult> {
  const how = { resend: !call.sideEffect, tool: call.name, sdkTimeoutMs: call.sdkTimeoutMs }
  return inSession(server, sessions, signal, how, (client, options) =>
    client.callTool(
      { name: call.name, arguments: call.args, _meta: { idempotencyKey: call.idempotencyKey } },
      undefined,
      options,
    ),
  ) as Promise<McpCallResult>
}

type RequestOptions = { signal?: AbortSignal; timeout: number }

/**
 * Runs `use` in the server's session. When the session turns out broken it is dropped, so the
 * next request opens a new one; this request is sent again there only when `resend` (read-only),
 * once, and not after its own signal gave up.
 */
async function inSession<T>(
  server: McpServerConfig,
  sessions: McpSessions | undefined,
  signal: AbortSignal | undefined,
  how: { resend: boolean; tool?: string; sdkTimeoutMs?: number | undefined },
  use: (client: Client, options: RequestOptions) => Promise<T>,
): Promise<T> {
  // The SDK's own timeout a little later than the tool's, so dispatch's timeout speaks first.
  const timeout = how.sdkTimeoutMs ?? server.timeoutMs + 1_000
  const options = { ...(signal ? { signal } : {}), timeout }
  return withMcpSessions(sessions, async (slice) => {
    for (let attempt = 1; ; attempt++) {
      const session = await untilAborted(slice.session(server), signal)
      try {
        return await use(session.client, options)
      } catch (err) {
        const failure = signal?.aborted ? undefined : sessionFailure(err, session.id)
        if (!failure) throw err
        slice.drop(server, session, failure === 'ended')
        if (failure === 'broken') throw err
        if (how.resend && attempt === 1) continue
        if (how.resend) throw err
        throw sideEffectSessionError(server.name, how.tool ?? 'tools/call', failure, err)
      }
    }
  })
}

/** `pending`, or the signal's reason as soon as it aborts (a shared session opens for all). */
function untilAborted<T>(pending: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return pending
  if (signal.aborted) return Promise.reject(signal.reason)
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason)
    signal.addEventListener('abort', onAbort, { once: true })
    pending.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort))
  })
}

function pickHints(a: Record<string, unknown>): NonNullable<ListedMcpTool['annotations']> {
  const hints: NonNullable<ListedMcpTool['annotations']> = {}
  for (const key of ['readOnlyHint', 'destructiveHint', 'idempotentHint'] as const) {
    if (typeof a[key] === 'boolean') hints[key] = a[key]
  }
  return hints
}
