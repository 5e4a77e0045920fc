/**
 * `405 Method Not Allowed` with an `Allow` header for a path that exists under other methods
 * (RFC 9110 §15.5.6), read from the app's own route table so new routes are covered as added.
 */

interface RouteEntry {
  method: string
  path: string
}

/**
 * The methods `path` answers to (HEAD wherever GET is), or an empty list if none. A path some
 * route names literally (`/v1/runs/stream`) answers only that route's methods, never those of a
 * route whose parameter would also match it (`DELETE /v1/runs/:id`).
 */
export function allowedMethods(routes: readonly RouteEntry[], path: string): string[] {
  const methods = new Set<string>()
  const usable = routes.filter((r) => r.method !== 'ALL' && !r.path.includes('*'))
  const literal = usable.filter((r) => r.path === path)
  for (const route of literal.length ? literal : usable) {
    if (patternOf(route.path).test(path)) methods.add(route.method)
  }
  if (methods.has('GET')) methods.add('HEAD')
  return [...methods].sort()
}

const patterns = new Map<string, RegExp>()

function patternOf(path: string): RegExp {
  let re = patterns.get(path)
  if (!re) {
    const source = path
      .split('/')
      .map((part) => (part.startsWith(':') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('/')
    re = new RegExp(`^${source}$`)
    patterns.set(path, re)
  }
  return re
}
