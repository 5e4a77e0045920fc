/**
 * One MCP session with one server, over Streamable HTTP with the official SDK client: the client
 * after its initialize handshake, and how it ends. The calls of a slice share it
 * (mcp-sessions.ts); what a failure of it means is decided in mcp-session-failure.ts.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { CfWorkerJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/cfworker'
import { checkAnswer, ELICITATION_CAPABILITY, questionOf, type McpAsker } from './mcp-elicitation'
import { McpConnectionError } from './mcp-session-failure'
import type { McpServerConfig } from './mcp-servers'

export interface McpSession {
  readonly client: Client
  /** The server's `Mcp-Session-Id`; a stateless server gives none. */
  readonly id: string | undefined
  /** Ends the session: a DELETE when the server gave an id (as the spec asks), then closes. */
  end(): Promise<void>
  /** Closes without a DELETE: for a session the server has forgotten or cannot be reached. */
  abandon(): Promise<void>
}

/** How long the end of a slice waits for a server to answer a session's DELETE. */
const END_TIMEOUT_MS = 2_000

/**
 * Opens a session: the `initialize` request and the `initialized` notification. With `ask`, the
 * session declares elicitation and a server's questions go to it (mcp-elicitation.ts).
 */
export async function openMcpSession(server: McpServerConfig, ask?: McpAsker): Promise<McpSession> {
  const transport = new StreamableHTTPClientTransport(new URL(server.url), {
    // Every request goes out, the GET stream too: it carries what the server starts (a
    // question to a person: elicitation) and resumes a response stream the server closed (with
    // `Last-Event-ID`, after the `retry:` it asked for). The session's close ends it.
    fetch: (input, init) =>
      // Looked up at call time, so a test's outbound fake (and nothing else) answers.
      fetch(input, init).catch((err: unknown) => {
        // Our own close aborts requests still in flight: that is no failure of the server.
        if (init?.signal?.aborted) throw err
        throw new McpConnectionError(server.name, err)
      }),
    ...(server.token
      ? { requestInit: { headers: { authorization: `Bearer ${server.token}` } } }
      : {}),
  })
  // The cfworker validator checks output schemas without code generation (Workers forbid eval).
  const client = new Client(
    { name: 'edgeloop', version: '0.1.0' },
    {
      jsonSchemaValidator: new CfWorkerJsonSchemaValidator(),
      capabilities: ask ? { elicitation: ELICITATION_CAPABILITY } : {},
    },
  )
  if (ask) {
    client.setRequestHandler(ElicitRequestSchema, async (request, extra) => {
      const question = questionOf(server.name, request.params)
      const checked = checkAnswer(question, await ask(question, extra.signal))
      // The asker takes only checked answers; one that still fails is sent as no answer at all.
      return checked.ok ? checked.answer : { action: 'cancel' }
    })
  }
  // Not a caller's signal: the session outlives the call that opened it (calls wait for it
  // within their own timeouts). The SDK's timeout a little later, so this one speaks first. The
  // timer is disarmed once the handshake is over: the SDK keeps listening to the signal, and a
  // late abort would send `notifications/cancelled` for the answered `initialize` (which the
  // spec forbids; servers answer 400).
  const handshake = new AbortController()
  const timer = setTimeout(
    () => handshake.abort(new DOMException('initialize timed out', 'TimeoutError')),
    server.timeoutMs,
  )
  try {
    await client.connect(transport, {
      signal: handshake.signal,
      timeout: server.timeoutMs + 1_000,
    })
  } finally {
    clearTimeout(timer)
  }
  const abandon = () => client.close().catch(() => {})
  return {
    client,
    get id() {
      return transport.sessionId
    },
    end: async () => {
      await withinTime(
        transport.terminateSession().catch(() => {}),
        END_TIMEOUT_MS,
      )
      await abandon()
    },
    abandon,
  }
}

/** Waits for `work`, or `ms` at most (a server that does not answer the DELETE keeps nothing). */
async function withinTime(work: Promise<void>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))
  try {
    await Promise.race([work, late])
  } finally {
    clearTimeout(timer)
  }
}
