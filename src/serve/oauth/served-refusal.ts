import { errorResponse } from './error-response'

/**
 * Why a served request is refused, for its route to answer in its own shape (`/mcp` as a JSON-RPC
 * error, say): the status, a stable code, what to do, and the headers it must carry (the
 * `WWW-Authenticate` challenge that tells a client where to authorize).
 */
export interface ServedRefusal {
  status: 401 | 403 | 503
  code: string
  message: string
  details?: unknown
  headers: Headers
}

/** A refusal as edgeloop's error answer, `{ error: { code, message, details? } }`. */
export function refusalResponse(refusal: ServedRefusal): Response {
  return errorResponse(
    refusal.status,
    refusal.code,
    refusal.message,
    refusal.details,
    refusal.headers,
  )
}
