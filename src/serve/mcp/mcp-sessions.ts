import {
  isInitializeRequest,
  type JSONRPCMessage,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js'
import { mcpServing } from '../../config/mcp-serving'
import type { EnvRecord } from '../../config'
import type { Env } from '../../env'
import { errorResponse } from '../oauth/error-response'
import type { McpCaller } from './mcp-caller'
import { sessionId, verifySession, type McpSession } from './signed-ids'

/**
 * The key `/mcp` signs its session and event ids with (docs/serving.md#sessions-and-resumption):
 * MCP_SESSION_SECRET, else MCP_TOKEN_KEY (a secret the deployment already keeps; the signed text
 * is labelled, so nothing it seals can be confused with a signature). Neither: no sessions, and
 * `/mcp` is stateless as before (no resumption, no elicitation).
 */
export function sessionKey(env: Env): string | null {
  for (const value of [env.MCP_SESSION_SECRET, env.MCP_TOKEN_KEY]) {
    if (typeof value === 'string' && value.trim()) return value.trim()
  }
  return null
}

/** A request's session, or the answer that refuses it; `null`: none sent (or none kept). */
export type SessionCheck = { session: McpSession | null } | { refusal: Response }

/**
 * The request's Mcp-Session-Id, checked against the calling token: one signed for another token,
 * altered or forged is "not found" (404, as the transport spec says of a session a server does
 * not know), and says nothing more. One of this token past MCP_SESSION_TTL_SECONDS is not found
 * either (a client starts a new session on a 404), and says it expired.
 */
export async function checkSession(
  env: Env,
  request: Request,
  caller: McpCaller,
): Promise<SessionCheck> {
  const sent = request.headers.get('mcp-session-id')
  if (sent === null) return { session: null }
  const key = sessionKey(env)
  const session = key ? await verifySession(key, sent.trim(), caller.name) : null
  if (session) {
    const ttlMs = mcpServing(env as unknown as EnvRecord).sessionTtlMs
    const age = Date.now() - session.issuedAt
    if (age <= ttlMs) return { session }
    return {
      refusal: errorResponse(
        404,
        'session_not_found',
        `Mcp-Session-Id expired: a session lasts ${ttlMs / 1000} s (MCP_SESSION_TTL_SECONDS); initialize again (without Mcp-Session-Id) for a new one`,
      ),
    }
  }
  return {
    refusal: errorResponse(
      404,
      'session_not_found',
      `Mcp-Session-Id is not a session of token "${caller.name}" on this server; initialize again (without Mcp-Session-Id) for a new one`,
    ),
  }
}

/** The session an initialize request opens, if sessions are kept: its id, bound to the caller. */
export async function sessionFor(
  env: Env,
  caller: McpCaller,
  message: JSONRPCMessage | null,
): Promise<string | null> {
  const key = sessionKey(env)
  if (!key || !message || !isInitializeRequest(message)) return null
  const elicitation = message.params.capabilities.elicitation
  // An empty `elicitation: {}` is form mode, as the spec reads it for clients of 2025-06-18.
  const form = elicitation !== undefined && (elicitation.form !== undefined || !elicitation.url)
  return sessionId(key, { sub: caller.name, elicitation: form, issuedAt: Date.now() })
}

/** The body's one JSON-RPC message, or null (a batch, or not JSON: the SDK answers those). */
export function messageOf(raw: string): JSONRPCMessage | null {
  try {
    const parsed: unknown = JSON.parse(raw)
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed)
      ? (parsed as JSONRPCMessage)
      : null
  } catch {
    return null
  }
}

/** The id of a JSON-RPC request, or undefined for a notification or response. */
export function requestIdOf(message: JSONRPCMessage | null): RequestId | undefined {
  if (!message || !('method' in message) || !('id' in message)) return undefined
  const id = (message as { id?: unknown }).id
  return typeof id === 'string' || typeof id === 'number' ? id : undefined
}
