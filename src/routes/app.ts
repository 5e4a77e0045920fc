import { Hono } from 'hono/tiny'
import { ConfigError } from '../errors/config-error'
import { logEvent } from '../runs/log'
import { slackRoutes } from './slack'
import type { AppEnv } from './app-env'
import { ApiError, errorBody } from './api-error'
import { openApiDocument } from './openapi'
import { runsRoutes } from './runs'

/** The Worker's HTTP surface (docs/architecture.md#layers). Every error leaves as `{ error: { code, message } }`. */
export const app = new Hono<AppEnv>()

// hono/tiny (the smallest router, for the bundle budget) would also match every path with a
// trailing slash; routes are exact, as with the default router.
app.use('*', async (c, next) => {
  const path = c.req.path
  if (path.length > 1 && path.endsWith('/')) return c.notFound()
  await next()
})
app.get('/healthz', (c) => c.json({ ok: true, service: 'edgeloop' }))
app.get('/openapi.json', (c) => c.json(openApiDocument() as object))
app.route('/v1/runs', runsRoutes)
app.route('/slack', slackRoutes)

app.notFound((c) =>
  c.json(
    new ApiError(
      404,
      'not_found',
      `no route ${c.req.method} ${new URL(c.req.url).pathname}`,
    ).toJSON(),
    404,
  ),
)

app.onError((err, c) => {
  if (err instanceof ApiError) return c.json(err.toJSON(), err.status)
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
