import { Hono } from 'hono/tiny'
import type { AppEnv } from './app-env'

/**
 * `GET /console`: the web console (docs/architecture.md#events). Public files; the API calls need a
 * token. Their bytes are static assets (written from src/console/ by scripts/build.mjs, outside
 * the Worker's script: docs/architecture.md#performance), served here with these headers.
 */
export const consoleRoutes = new Hono<AppEnv>()

const headers = (type: string) => ({
  'Content-Type': `${type}; charset=utf-8`,
  'Cache-Control': 'no-cache',
  'X-Content-Type-Options': 'nosniff',
  // Only this origin's script and API: no inline script, no third party, no framing.
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'Referrer-Policy': 'no-referrer',
})

/** Route under /console → its file under the assets directory, and its media type. */
const FILES = [
  ['/', 'console/index.html', 'text/html'],
  ['/console.js', 'console/console.js', 'text/javascript'],
  ['/console.css', 'console/console.css', 'text/css'],
  ['/favicon.svg', 'console/favicon.svg', 'image/svg+xml'],
] as const

for (const [route, file, type] of FILES) {
  consoleRoutes.get(route, async (c) => {
    const asset = await c.env.ASSETS.fetch(new URL(`/${file}`, c.req.url))
    if (!asset.ok) {
      await asset.body?.cancel()
      // A deployment without the build's assets: say so rather than serve an empty page.
      return c.json(
        {
          error: 'console_unavailable',
          message: `static asset /${file} is missing (npm run build)`,
        },
        500,
      )
    }
    return c.body(asset.body as ReadableStream, 200, headers(type))
  })
}
