import type { Context, MiddlewareHandler } from 'hono'
import {
  timingSafeEqual,
  SIGNATURE_HEADER,
  TIMESTAMP_HEADER,
  verifySignedBody,
} from '../security/hmac'
import type { AppEnv } from './app-env'
import { ApiError } from './api-error'
import { readRawBody } from './body'

/**
 * API authentication: `Authorization: Bearer <API_TOKEN>`, or for webhook senders an
 * `X-Edgeloop-Signature: v1=<hex HMAC-SHA256 of "{X-Edgeloop-Timestamp}.{raw body}">` with
 * WEBHOOK_SECRET and a 5-minute replay window. Reads the raw body once (size-limited) and
 * leaves it in `c.var.rawBody` for the handler.
 */
export function requireAuth(options: { now?: () => number } = {}): MiddlewareHandler<AppEnv> {
  // Read the clock per request, not at import: the replay window follows the Worker's clock.
  const now = options.now ?? (() => Date.now())
  return async (c, next) => {
    const raw =
      c.req.method === 'GET' || c.req.method === 'HEAD' ? '' : await readRawBody(c.req.raw)
    c.set('rawBody', raw)
    c.set('principal', await authenticate(c, raw, now()))
    await next()
  }
}

async function authenticate(c: Context<AppEnv>, raw: string, nowMs: number): Promise<string> {
  const header = c.req.header('Authorization')
  const token = c.env.API_TOKEN
  if (header !== undefined) {
    const match = /^Bearer\s+(.+)$/i.exec(header)
    if (!match)
      throw new ApiError(401, 'unauthorized', 'Authorization must be "Bearer <API_TOKEN>"')
    if (!token)
      throw new ApiError(401, 'auth_not_configured', 'this server has no API_TOKEN configured')
    if (!timingSafeEqual(match[1]!.trim(), token))
      throw new ApiError(401, 'unauthorized', 'invalid API token')
    return 'api'
  }
  const signature = c.req.header(SIGNATURE_HEADER)
  if (signature !== undefined) {
    const secret = c.env.WEBHOOK_SECRET
    if (!secret)
      throw new ApiError(401, 'auth_not_configured', 'this server has no WEBHOOK_SECRET configured')
    const verified = await verifySignedBody({
      secret,
      timestamp: c.req.header(TIMESTAMP_HEADER) ?? null,
      signature,
      body: raw,
      nowSeconds: Math.floor(nowMs / 1000),
    })
    if (!verified.ok) throw new ApiError(401, 'invalid_signature', verified.reason)
    return 'webhook'
  }
  throw new ApiError(
    401,
    'unauthorized',
    `send Authorization: Bearer <API_TOKEN>, or sign the body with ${SIGNATURE_HEADER} and ${TIMESTAMP_HEADER}`,
  )
}
