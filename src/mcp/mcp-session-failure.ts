/**
 * When a failed request means its MCP session is broken, and what a side effect's caller is told
 * then. Per the Streamable HTTP spec a server that ended a session (it restarted, the session
 * expired) answers requests carrying its `Mcp-Session-Id` with 404, and the client must open a
 * new one; a request whose connection broke may or may not have reached the server.
 */
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js'

/** The connection to a server failed (the transport's fetch rejected): no HTTP answer came. */
export class McpConnectionError extends Error {
  override name = 'McpConnectionError'
  constructor(server: string, cause: unknown) {
    const why = cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause)
    super(`the connection to the ${server} MCP server failed (${why})`, { cause })
  }
}

/**
 * `ended`: the server answered 404 for the session, so it did not take the request.
 * `connection`: no answer came; the request may have reached the server.
 * `broken`: another HTTP failure (the session is not trusted any more, the request not resent).
 */
export type SessionFailure = 'ended' | 'connection' | 'broken'

/** What `err` says about the session it happened in; undefined when the session is fine. */
export function sessionFailure(
  err: unknown,
  sessionId: string | undefined,
): SessionFailure | undefined {
  if (err instanceof StreamableHTTPError) {
    // Without a session id a 404 is the wrong URL, not an ended session.
    return err.code === 404 && sessionId !== undefined ? 'ended' : 'broken'
  }
  if (err instanceof McpConnectionError) return 'connection'
  // The SDK's own word for a transport that closed under a request; a body cut off mid-read.
  if (err instanceof McpError)
    return err.code === ErrorCode.ConnectionClosed ? 'connection' : undefined
  if (err instanceof TypeError) return 'connection'
  return undefined
}

/**
 * Why a side effect failed with its session, never sent again: one that may have landed must not
 * be repeated blindly (docs/architecture.md#side-effects-at-most-once).
 */
export function sideEffectSessionError(
  server: string,
  tool: string,
  failure: 'ended' | 'connection',
  cause: unknown,
): Error {
  const text =
    failure === 'ended'
      ? `the ${server} MCP server answered that its session had ended (HTTP 404), so it did ` +
        `not take the ${tool} call; edgeloop did not send it again. A new session is opened for ` +
        'the next call: call it again if it is still needed'
      : `the ${tool} call's session with the ${server} MCP server broke while it was sent ` +
        `(${describe(cause)}); it may have taken effect, so edgeloop did not send it again. ` +
        'Check its effect before retrying'
  return new Error(text, { cause })
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err)
}
