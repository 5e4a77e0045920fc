/**
 * One MCP session with one server, over Streamable HTTP with the official SDK client: the client
 * after its initialize handshake, and how it ends. The calls of a slice share it
 * (mcp-sessions.ts); what a failure of it means is decided in mcp-session-failure.ts.
 */
import { extractWWWAuthenticateParams } from '@modelcontextprotocol/sdk/client/auth.js'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { CfWorkerJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/cfworker'
import { checkAnswer, ELICITATION_CAPABILITY, questionOf, type McpAsker } from './mcp-elicitation'
import { McpConnectionError } from './mcp-session-failure'
import type { McpServerAuth, McpServerConfig } from './mcp-servers'
import { McpAccessRefused, McpConnectionNeeded, McpOAuthError } from './oauth/connection-needed'
import { McpOAuthProvider, type McpOAuthContext } from './oauth/mcp-oauth-provider'
import { oauthFetch } from './oauth/oauth-fetch'

/**
 * What a slice's sessions need for servers with `auth` (docs/mcp.md#oauth): where connections are
 * stored, and the person behind the run (`token:<name>`, `slack:<user id>`), null for none.
 */
export interface McpSessionAuth extends Omit<McpOAuthContext, 'owner'> {
  person: string | null
}

/** Whose connection a run uses for `server`: `deployment`, or its person's. */
export function connectionOwner(server: McpServerConfig, person: string | null): string | null {
  if (server.auth?.kind === 'oauth' && server.auth.owner === 'person') return person
  return 'deployment'
}

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
export async function openMcpSession(
  server: McpServerConfig,
  auth?: McpSessionAuth,
  ask?: McpAsker,
): Promise<McpSession> {
  const authProvider = server.auth ? oauthProviderFor(server, auth) : undefined
  const endpoint = new URL(server.url).href
  const forAuth = oauthFetch(server)
  const transport = new StreamableHTTPClientTransport(new URL(server.url), {
    fetch: async (input, init) => {
      // Discovery, registration and tokens (any URL but the endpoint's): bounded, no redirects.
      if (String(input instanceof Request ? input.url : input) !== endpoint) {
        return forAuth(input as string | URL, init).catch((err: unknown) => {
          authProvider?.authFailed(err)
          throw err
        })
      }
      // Every request to the endpoint goes out, the GET stream too: it carries what the server
      // starts (a question to a person: elicitation) and resumes a response stream the server
      // closed (with `Last-Event-ID`, after the `retry:` it asked for). The session's close
      // ends it. Looked up at call time, so a test's outbound fake (and nothing else) answers.
      const res = await fetch(input, init).catch((err: unknown) => {
        // Our own close aborts requests still in flight: that is no failure of the server.
        if (init?.signal?.aborted) throw err
        throw new McpConnectionError(server.name, err)
      })
      refusal(server, res, authProvider, auth)
      return res
    },
    ...(authProvider ? { authProvider } : {}),
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

function oauthProviderFor(
  server: McpServerConfig,
  auth: McpSessionAuth | undefined,
): McpOAuthProvider {
  if (!auth) throw new McpOAuthError(server.name, 'no connection store is configured')
  const owner = connectionOwner(server, auth.person)
  if (owner === null) {
    throw new McpOAuthError(
      server.name,
      'its connections are per person (owner "person"), and no person is behind this run (a webhook); start it with an API token or from Slack',
    )
  }
  const { person: _person, ...context } = auth
  return new McpOAuthProvider(
    server as McpServerConfig & { auth: McpServerAuth },
    { ...context, owner },
    { kind: 'use' },
  )
}

/**
 * Throws what a 401 or 403 the SDK will not handle means: a fixed token refused, a scope a
 * client-credentials client lacks, or (a person's grant) more scope a person must grant.
 */
function refusal(
  server: McpServerConfig,
  res: Response,
  provider: McpOAuthProvider | undefined,
  auth: McpSessionAuth | undefined,
): void {
  if (res.status !== 401 && res.status !== 403) return
  const { scope, error } = extractWWWAuthenticateParams(res)
  // With OAuth, a 401 starts the SDK's flow (refresh, or a connect item).
  if (provider && res.status === 401) return
  if (res.status === 403 && error === 'insufficient_scope' && server.auth?.kind === 'oauth') {
    const owner = connectionOwner(server, auth?.person ?? null) ?? 'deployment'
    throw new McpConnectionNeeded(server.name, owner, scope ?? null, 'insufficient_scope')
  }
  throw new McpAccessRefused(server.name, res.status, scope ?? null)
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
