import type { Context } from 'hono'
import { Hono } from 'hono/tiny'
import { cors } from 'hono/cors'
import type { EnvRecord } from '../../config'
import { mcpServing } from '../../config/mcp-serving'
import { originAllowed, resumeCall, serveMcp, type McpCaller } from '../../serve/mcp'
import { refusalResponse, scopeRefusal } from '../../serve/oauth'
import type { AppEnv } from '../app-env'
import { errorBody } from '../api-error'
import { readRawBody, refuseDeepJson } from '../body'
import { declareRoute, DeclaredRoutes } from '../openapi/serve-route'
import { mcpOperation, mcpPreflightOperation, mcpResumeOperation } from '../openapi/openapi-mcp'
import { requireServedCaller } from './oauth'

/**
 * `POST /mcp`: the agents as an MCP server (docs/serving.md#mcp); `GET /mcp` with Last-Event-ID
 * resumes a call's stream (docs/serving.md#sessions-and-resumption). This route checks the Origin
 * (DNS rebinding), the caller (an API token or an OAuth access token for /mcp, with runs:write:
 * every call starts a run) and the body's size and depth, then hands the request to serve/mcp.
 * Its refusals before the protocol are the API's error answers; the protocol's are JSON-RPC.
 */
export const mcpRoutes = new Hono<AppEnv>()

/** What /openapi.json says of `/mcp`. */
export const mcpDocs = new DeclaredRoutes('/mcp')

const postMcp = declareRoute({ method: 'post', path: '/', ...mcpOperation })
const preflightMcp = declareRoute({ method: 'options', path: '/', ...mcpPreflightOperation })
const resumeMcp = declareRoute({ method: 'get', path: '/', ...mcpResumeOperation })

/**
 * CORS for the browser pages the Origin check lets through (PUBLIC_URL's, MCP_ALLOWED_ORIGINS,
 * loopback on loopback): a preflight answers what a client sends and reads; any other page gets
 * no Access-Control-Allow-Origin, and its POST is refused below.
 */
const mcpCors = cors({
  origin: (origin, c) =>
    origin && originAllowed(origin, c.req.url, mcpServing(c.env as EnvRecord)) ? origin : null,
  allowMethods: ['GET', 'POST', 'OPTIONS'],
  allowHeaders: [
    'Authorization',
    'Content-Type',
    'Accept',
    'MCP-Protocol-Version',
    'Mcp-Session-Id',
    'Last-Event-ID',
  ],
  exposeHeaders: ['WWW-Authenticate', 'MCP-Protocol-Version', 'Mcp-Session-Id'],
  maxAge: 600,
})

mcpDocs.serve(mcpRoutes, preflightMcp, mcpCors as (c: Context<AppEnv>) => Promise<Response>)

mcpDocs.serve(
  mcpRoutes,
  postMcp,
  mcpCors,
  refuseForeignOrigin,
  requireServedCaller('/mcp'),
  async (c) => {
    const served = c.var.served
    // Every call starts a run, as POST /v1/runs does: through OAuth, the step-up challenge.
    if (!c.var.caller.scopes.includes('runs:write') && served.caller) {
      return refusalResponse(scopeRefusal(served, ['runs:write']))
    }
    const raw = await readRawBody(c.req.raw)
    refuseDeepJson(raw)
    return serveMcp(c.env, c.req.raw, mcpCaller(c), raw)
  },
)

mcpDocs.serve(
  mcpRoutes,
  resumeMcp,
  mcpCors,
  refuseForeignOrigin,
  requireServedCaller('/mcp'),
  async (c) => resumeCall(c.env, c.req.raw, mcpCaller(c)),
)

function mcpCaller(c: Context<AppEnv>): McpCaller {
  return {
    name: c.var.caller.name,
    scopes: c.var.caller.scopes,
    runs: c.var.caller.kind === 'token' ? c.var.caller.runs : 'all',
  }
}

/** A browser page of a foreign origin is refused before anything else (DNS rebinding). */
async function refuseForeignOrigin(c: Context<AppEnv>, next: () => Promise<void>) {
  const origin = c.req.header('Origin')
  if (originAllowed(origin, c.req.url, mcpServing(c.env as unknown as EnvRecord))) return next()
  return c.json(
    errorBody(
      'origin_not_allowed',
      `requests to /mcp from the page origin ${origin?.slice(0, 200)} are refused; a browser client's origin must be PUBLIC_URL's or listed in MCP_ALLOWED_ORIGINS`,
    ),
    403,
  )
}
