import type { Context } from 'hono'
import { Hono } from 'hono/tiny'
import { cors } from 'hono/cors'
import type { EnvRecord } from '../../config'
import { mcpServing } from '../../config/mcp-serving'
import { ConfigError } from '../../errors/config-error'
import { originAllowed, serveMcp } from '../../serve/mcp'
import type { AppEnv } from '../app-env'
import { ApiError } from '../api-error'
import { requireAuth } from '../api/auth'
import { refuseDeepJson } from '../body'
import { declareRoute, DeclaredRoutes } from '../openapi/serve-route'
import { mcpOperation, mcpPreflightOperation } from '../openapi/openapi-mcp'

/**
 * `POST /mcp`: the agents as an MCP server (docs/serving.md#mcp). This route checks the Origin
 * (DNS rebinding), the API token (scope runs:write: every call starts a run) and the body's size
 * and depth, then hands the request to serve/mcp. Its refusals are JSON-RPC error responses, the
 * form an MCP client reads, with the API's error code in `error.data.code`.
 */
export const mcpRoutes = new Hono<AppEnv>()

/** What /openapi.json says of `/mcp`. */
export const mcpDocs = new DeclaredRoutes('/mcp')

/** Where a client finds how to get a token for `/mcp` (the OAuth protected-resource metadata). */
export const RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource/mcp'

/** JSON-RPC codes for the refusals before the protocol: a bad request, or no right to call. */
const INVALID_REQUEST = -32600
const NOT_ALLOWED = -32000

const postMcp = declareRoute({ method: 'post', path: '/', ...mcpOperation })
const preflightMcp = declareRoute({ method: 'options', path: '/', ...mcpPreflightOperation })

/**
 * CORS for the browser pages the Origin check lets through (PUBLIC_URL's, MCP_ALLOWED_ORIGINS,
 * loopback on loopback): a preflight answers what a client sends and reads; any other page gets
 * no Access-Control-Allow-Origin, and its POST is refused below.
 */
const mcpCors = cors({
  origin: (origin, c) =>
    origin && originAllowed(origin, c.req.url, mcpServing(c.env as EnvRecord)) ? origin : null,
  allowMethods: ['POST', 'OPTIONS'],
  allowHeaders: [
    'Authorization',
    'Content-Type',
    'Accept',
    'MCP-Protocol-Version',
    'Last-Event-ID',
  ],
  exposeHeaders: ['WWW-Authenticate', 'MCP-Protocol-Version'],
  maxAge: 600,
})

mcpDocs.serve(mcpRoutes, preflightMcp, mcpCors as (c: Context<AppEnv>) => Promise<Response>)

mcpDocs.serve(
  mcpRoutes,
  postMcp,
  mcpCors,
  answerAsJsonRpc,
  refuseForeignOrigin,
  requireAuth({ scope: () => 'runs:write' }),
  async (c) => {
    const caller = c.var.caller
    // requireAuth let only a token through (a webhook signature holds no runs:write here).
    if (caller.kind !== 'token')
      throw new ApiError(403, 'forbidden', 'use Authorization: Bearer <token>')
    const raw = c.var.rawBody
    refuseDeepJson(raw)
    const request = new Request(c.req.raw.url, {
      method: 'POST',
      headers: c.req.raw.headers,
      body: raw,
    })
    return serveMcp(c.env, request, caller)
  },
)

/** A browser page of a foreign origin is refused before anything else (DNS rebinding). */
async function refuseForeignOrigin(c: Context<AppEnv>, next: () => Promise<void>) {
  const origin = c.req.header('Origin')
  if (originAllowed(origin, c.req.url, mcpServing(c.env as unknown as EnvRecord))) return next()
  return rpcError(
    c,
    403,
    NOT_ALLOWED,
    'origin_not_allowed',
    `requests to /mcp from the page origin ${origin?.slice(0, 200)} are refused; a browser client's origin must be PUBLIC_URL's or listed in MCP_ALLOWED_ORIGINS`,
  )
}

/**
 * What the API answers as `{ error: { code, message } }` (a bad token, a missing scope, a body too
 * large or too deep) leaves /mcp as a JSON-RPC error response; a 401 names where the client
 * learns how to get a token, a 403 for a scope the scope it needs (RFC 6750 §3).
 */
async function answerAsJsonRpc(c: Context<AppEnv>, next: () => Promise<void>) {
  await next()
  const err = c.error
  if (!(err instanceof ApiError) && !(err instanceof ConfigError)) return
  if (err instanceof ConfigError) {
    c.res = rpcError(c, 503, INVALID_REQUEST, 'misconfigured', err.message)
    return
  }
  const res = rpcError(
    c,
    err.status,
    err.status === 401 || err.status === 403 ? NOT_ALLOWED : INVALID_REQUEST,
    err.code,
    err.message,
    err.details,
  )
  const metadata = `${new URL(c.req.url).origin}${RESOURCE_METADATA_PATH}`
  if (err.status === 401) {
    res.headers.set('WWW-Authenticate', `Bearer resource_metadata="${metadata}"`)
  } else if (err.status === 403 && err.code === 'forbidden') {
    res.headers.set(
      'WWW-Authenticate',
      `Bearer error="insufficient_scope", scope="runs:write", resource_metadata="${metadata}"`,
    )
  }
  // Replacing the answer keeps the headers set on it so far (CORS).
  c.res = res
}

function rpcError(
  c: Context<AppEnv>,
  status: number,
  code: number,
  apiCode: string,
  message: string,
  details?: unknown,
): Response {
  const data = { code: apiCode, ...(details !== undefined ? { details } : {}) }
  return c.json({ jsonrpc: '2.0', id: null, error: { code, message, data } }, status as 400)
}
