import type { Context } from 'hono'
import { Hono } from 'hono/tiny'
import { ConfigError } from '../errors/config-error'
import { loadConfig } from '../config'
import { logEvent } from '../runs/log'
import { registerSecrets } from '../security/redact'
import { StartError, type StartRefusal } from '../runs/start'
import { slackDocs, slackRoutes } from './slack/slack'
import type { AppEnv } from './app-env'
import { ApiError, errorBody } from './api-error'
import { allowedMethods } from './method-not-allowed'
import { openApiDocument } from './openapi/openapi'
import { consoleDocs, consoleRoutes } from './console'
import { meDocs, meRoutes } from './api/me'
import { agentsDocs, agentsRoutes } from './api/agents'
import { approvalsDocs, approvalsRoutes, inboxDocs, inboxRoutes } from './api/run-list'
import type { DeclaredRoutes } from './openapi/serve-route'
import { runsDocs, runsRoutes } from './api/runs'
import { openApiRoute, serviceDocs, serviceRoutes } from './service'
import { connectionDocs, connectionRoutes } from './connections/connections'
import { oauthDocs, oauthRoutes } from './connections/oauth'
import { servedOAuthDocs, servedOAuthRoutes } from './serve/oauth'
import { mcpDocs, mcpRoutes } from './serve/mcp'
import { a2aDocs, a2aRoutes } from './serve/a2a'

/**
 * Every group of routes, mounted at its base, in the order /openapi.json lists them: each route
 * is declared once, with its handler and what the document says of it.
 */
const GROUPS: readonly (readonly [DeclaredRoutes, Hono<AppEnv>])[] = [
  [serviceDocs, serviceRoutes],
  [consoleDocs, consoleRoutes],
  [runsDocs, runsRoutes],
  [approvalsDocs, approvalsRoutes],
  [inboxDocs, inboxRoutes],
  [meDocs, meRoutes],
  [connectionDocs, connectionRoutes],
  [oauthDocs, oauthRoutes],
  [agentsDocs, agentsRoutes],
  [slackDocs, slackRoutes],
  // The OAuth authorization server that issues the tokens /mcp takes besides API tokens
  // (docs/serving.md#authorization).
  [servedOAuthDocs, servedOAuthRoutes],
  // Our agents as an MCP server; its route authenticates with requireServedCaller itself, to
  // answer a refusal as a JSON-RPC error and let the CORS preflight through (docs/serving.md).
  [mcpDocs, mcpRoutes],
  // A2A: the agent card and the JSON-RPC endpoint (docs/serving.md#a2a).
  [a2aDocs, a2aRoutes],
]
const DOCUMENTED = GROUPS.map(([docs]) => docs)

/** This deployment's budget maxima for /openapi.json; none while its settings are broken. */
function deploymentMaxima(env: AppEnv['Bindings']): Record<string, number> | undefined {
  try {
    return loadConfig(env).maxBudget as unknown as Record<string, number>
  } catch {
    return undefined
  }
}

/** The Worker's HTTP surface (docs/architecture.md#layers). Every error leaves as `{ error: { code, message } }`. */
export const app = new Hono<AppEnv>()

// hono/tiny (the smallest router, for the bundle budget) would also match every path with a
// trailing slash; routes are exact, as with the default router.
app.use('*', async (c, next) => {
  // Whatever this request logs, its secrets are redacted (security/redact).
  registerSecrets(c.env)
  const path = c.req.path
  if (path.length > 1 && path.endsWith('/')) return c.notFound()
  // A path a route names literally takes only that route's methods: DELETE /v1/runs/stream is a
  // 405, not a run named "stream".
  const allow = app.routes.some((r) => r.path === path && r.method !== 'ALL')
    ? allowedMethods(app.routes, path)
    : null
  // That refusal is an API answer too: it gets the no-store below.
  if (allow && !allow.includes(c.req.method)) c.res = methodNotAllowed(c, path, allow)
  else await next()
  // API answers are one token's view of runs, traces and observations: no browser or proxy may
  // keep them. A route that says how it may be cached (the event stream) keeps its own rule.
  if (path.startsWith('/v1/') && !c.res.headers.has('Cache-Control')) {
    c.res.headers.set('Cache-Control', 'no-store')
  }
})
for (const [docs, routes] of GROUPS) app.route(docs.base, routes)
// The document of every group, this one included.
serviceDocs.serve(app, openApiRoute, (c) =>
  c.json(openApiDocument(new URL(c.req.url).origin, DOCUMENTED, deploymentMaxima(c.env)) as object),
)

app.notFound((c) => {
  const path = new URL(c.req.url).pathname
  const allow = allowedMethods(app.routes, path)
  if (allow.length) return methodNotAllowed(c, path, allow)
  return c.json(new ApiError(404, 'not_found', `no route ${c.req.method} ${path}`).toJSON(), 404)
})

function methodNotAllowed(c: Context<AppEnv>, path: string, allow: string[]) {
  c.header('Allow', allow.join(', '))
  return c.json(
    new ApiError(
      405,
      'method_not_allowed',
      `${path} does not answer ${c.req.method}; use ${allow.join(', ')}`,
      { allow },
    ).toJSON(),
    405,
  )
}

/** A refused start as HTTP answers it (docs/http-api.md); its body is the refusal's code. */
export const START_REFUSAL_STATUS = {
  invalid: 400,
  not_found: 404,
  conflict: 409,
} as const satisfies Record<StartRefusal, number>

app.onError((err, c) => {
  if (err instanceof StartError) {
    return c.json(errorBody(err.code, err.message, err.details), START_REFUSAL_STATUS[err.refusal])
  }
  if (err instanceof ApiError) {
    if (err.code === 'client_disconnected') {
      logEvent(c.env, 'client_disconnected', { method: c.req.method, path: c.req.path }, 'warn')
    }
    return c.json(err.toJSON(), err.status)
  }
  if (err instanceof ConfigError) {
    logEvent(c.env, 'config_error', { error: err.message }, 'error')
    return c.json(errorBody('misconfigured', err.message), 503)
  }
  // Not the client's fault: log it (no request data) and answer without internals.
  logEvent(
    c.env,
    'unhandled_error',
    { error: err instanceof Error ? `${err.name}: ${err.message}` : String(err) },
    'error',
  )
  return c.json(errorBody('internal_error', 'internal error; see the Worker logs'), 500)
})
