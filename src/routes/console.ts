import { Hono } from 'hono/tiny'
import { CONSOLE_FAVICON } from '../console/console-favicon'
import { CONSOLE_HTML } from '../console/console-page'
import { CONSOLE_SCRIPT } from '../console/console-script'
import { CONSOLE_CSS } from '../console/console-style'
import type { AppEnv } from './app-env'

/** `GET /console`: the web console (docs/architecture.md#events). Public files; the API calls need a token. */
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

consoleRoutes.get('/', (c) => c.body(CONSOLE_HTML, 200, headers('text/html')))
consoleRoutes.get('/console.js', (c) => c.body(CONSOLE_SCRIPT, 200, headers('text/javascript')))
consoleRoutes.get('/console.css', (c) => c.body(CONSOLE_CSS, 200, headers('text/css')))
consoleRoutes.get('/favicon.svg', (c) => c.body(CONSOLE_FAVICON, 200, headers('image/svg+xml')))
