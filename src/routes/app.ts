import { Hono } from 'hono/tiny'
import { ConfigError } from '../errors/config-error'
import { logEvent } from '../runs/log'
import { registerSecrets } from '../security/redact'
import { slackRoutes } from './slack/slack'
import type { AppEnv } from './app-env'
import { ApiError, errorBody } from './api-error'
import { allowedMethods } from './method-not-allowed'
import { openApiDocument } from './openapi/openapi'
import { consoleRoutes } from './console'
import { meDocs, meRoutes } from './api/me'
import { agentsDocs, agentsRoutes } from './api/agents'
import { approvalsDocs, approvalsRoutes } from './api/run-list'
import { runsDocs, runsRoutes } from './api/runs'
import { readiness } from './readiness'

/** The Worker's HTTP surface (docs/architecture.md#layers). Every error leaves as `{ error: { code, message } }`. */
export const app = new Hono<AppEnv>()

// hono/tiny (the smallest router, for the bundle budget) would also match every path with a
// trailing slash; routes are exact, as with the default router.
app.use('*', async (c, next) => {
  // Whatever this request logs, its secrets are redacted (security/redact).
  registerSecrets(c.env)
  const path = c.req.path
  if (path.length > 1 && path.endsWith('/')) return c.notFound()
  await next()
  // API answers are one token's view of runs, traces and observations: no browser or proxy may
  // keep them. A route that says how it may be cached (the event stream) keeps its own rule.
  if (path.startsWith('/v1/') && !c.res.headers.has('Cache-Control')) {
    c.res.headers.set('Cache-Control', 'no-store')
  }
})
app.get('/healthz', (c) =>
  c.req.query('deep') === undefined ? c.json({ ok: true, service: 'edgeloop' }) : readiness(c),
)
app.get('/readyz', readiness)
app.get('/openapi.json', (c) =>
  c.json(
    openApiDocument(new URL(c.req.url).origin, [
      runsDocs,
      approvalsDocs,
      meDocs,
      agentsDocs,
    ]) as object,
  ),
)
app.route(runsDocs.base, runsRoutes)
app.route(approvalsDocs.base, approvalsRoutes)
app.route(meDocs.base, meRoutes)
app.route(agentsDocs.base, agentsRoutes)
app.route('/console', consoleRoutes)
app.route('/slack', slackRoutes)

app.notFound((c) => {
  const path = new URL(c.req.url).pathname
  const allow = allowedMethods(app.routes, path)
  if (allow.length) {
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
  return c.json(new ApiError(404, 'not_found', `no route ${c.req.method} ${path}`).toJSON(), 404)
})

app.onError((err, c) => {
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
