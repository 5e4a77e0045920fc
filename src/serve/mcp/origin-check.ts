import type { McpServing } from '../../config/mcp-serving'

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]'])

/**
 * Whether a request to `/mcp` may come from `origin` (its Origin header), against DNS
 * rebinding (docs/serving.md#who-may-call): a request without one (no browser) may; a browser
 * page only from PUBLIC_URL's origin, an origin MCP_ALLOWED_ORIGINS lists, or, when the Worker
 * itself is reached on a loopback address (`wrangler dev`), a loopback page. A page of a foreign
 * name that resolves to this Worker's address still sends its own name, and is refused.
 */
export function originAllowed(
  origin: string | undefined,
  requestUrl: string,
  serving: Pick<McpServing, 'allowedOrigins' | 'publicOrigin'>,
): boolean {
  if (origin === undefined) return true
  const asked = origin.trim().toLowerCase()
  if (asked === serving.publicOrigin?.toLowerCase()) return true
  if (serving.allowedOrigins.includes(asked)) return true
  let page: URL
  try {
    page = new URL(asked)
  } catch {
    return false
  }
  return LOOPBACK.has(page.hostname) && LOOPBACK.has(new URL(requestUrl).hostname)
}
