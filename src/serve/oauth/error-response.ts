/**
 * An error answer in edgeloop's shape, `{ error: { code, message, details? } }`, never cached,
 * keeping `headers` (a `WWW-Authenticate` challenge, the consent cookies).
 */
export function errorResponse(
  status: number,
  code: string,
  message: string,
  details?: unknown,
  headers?: Headers,
): Response {
  const out = new Headers(headers)
  out.set('Content-Type', 'application/json')
  out.set('Cache-Control', 'no-store')
  const error = { code, message, ...(details !== undefined ? { details } : {}) }
  return new Response(JSON.stringify({ error }), { status, headers: out })
}
