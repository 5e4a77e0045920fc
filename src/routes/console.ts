import { Hono } from 'hono/tiny'
import { errorBody } from './api-error'
import type { AppEnv } from './app-env'
import { errorResponses, ROUTE_ERRORS } from './openapi/openapi-errors'
import { declareRoute, DeclaredRoutes } from './openapi/serve-route'

/**
 * `GET /console`: the web console (docs/architecture.md#events). Public files; the API calls need a
 * token. Their bytes are static assets (written from src/console/ by scripts/build.mjs, outside
 * the Worker's script: docs/architecture.md#performance), served here with these headers.
 */
export const consoleRoutes = new Hono<AppEnv>()

/** What /openapi.json says of each file here. */
export const consoleDocs = new DeclaredRoutes('/console')

const headers = (type: string) => ({
  'Content-Type': `${type}; charset=utf-8`,
  'Cache-Control': 'no-cache',
  'X-Content-Type-Options': 'nosniff',
  // Only this origin's script and API: no inline script, no third party, no framing.
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'Referrer-Policy': 'no-referrer',
})

/** Each file: its route under /console, its file under the assets directory, its media type. */
const FILES = [
  {
    path: '/',
    file: 'console/index.html',
    type: 'text/html',
    operationId: 'consolePage',
    summary: 'The web console (asks for an API token)',
  },
  {
    path: '/console.js',
    file: 'console/console.js',
    type: 'text/javascript',
    operationId: 'consoleScript',
    summary: "The console's script",
  },
  {
    path: '/console.css',
    file: 'console/console.css',
    type: 'text/css',
    operationId: 'consoleStyle',
    summary: "The console's style sheet",
  },
  {
    path: '/favicon.svg',
    file: 'console/favicon.svg',
    type: 'image/svg+xml',
    operationId: 'consoleIcon',
    summary: "The console's icon",
  },
] as const

for (const { path, file, type, operationId, summary } of FILES) {
  // Public: a file holds no secret; its API calls carry the token.
  const declared = declareRoute({
    method: 'get',
    path,
    operationId,
    summary,
    tags: ['service'],
    security: [],
    responses: {
      '200': { description: summary, content: { [type]: { schema: { type: 'string' } } } },
      ...errorResponses(ROUTE_ERRORS.consoleFile),
    },
  })
  consoleDocs.serve(consoleRoutes, declared, async (c) => {
    const asset = await c.env.ASSETS.fetch(new URL(`/${file}`, c.req.url))
    if (!asset.ok) {
      await asset.body?.cancel()
      // A deployment without the build's assets: say so, in every route's error shape, rather
      // than serve an empty page.
      const message =
        `static asset /${file} is missing from this deployment: ` +
        'run npm run build and deploy again'
      return c.json(errorBody('console_unavailable', message, { file: `/${file}` }), 404)
    }
    return c.body(asset.body as ReadableStream, 200, headers(type))
  })
}
