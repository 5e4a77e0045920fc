import type { Context, MiddlewareHandler } from 'hono'
import { type EnvRecord } from '../../config'
import { apiTokensFromEnv } from '../../config/security'
import { findToken, type Scope } from '../../security/api-tokens'
import { SIGNATURE_HEADER, TIMESTAMP_HEADER, verifySignedBody } from '../../security/hmac'
import type { AppEnv, Principal } from '../app-env'
import { ApiError } from '../api-error'
import { readRawBody } from '../body'

/**
 * API authentication: `Authorization: Bearer <token>` checked against API_TOKENS (named, scoped,
 * stored as SHA-256) and the legacy API_TOKEN (full access, named `api`), or for webhook senders
 * an `X-Edgeloop-Signature: v1=<hex HMAC-SHA256 of "{X-Edgeloop-Timestamp}.{raw body}">` with
 * WEBHOOK_SECRET and a 5-minute replay window. Reads the raw body once (size-limited) and leaves
 * it in `c.var.rawBody` for the handler. Then checks the scope the route needs (`scopeFor`);
 * a route whose `scope` is `null` takes any authenticated caller and decides itself (GET /v1/me).
 */
export function requireAuth(
  options: { now?: () => number; scope?: (c: Context<AppEnv>) => Scope | null } = {},
): MiddlewareHandler<AppEnv> {
  // Read the clock per request, not at import: the replay window follows the Worker's clock.
  const now = options.now ?? (() => Date.now())
  const scopeOf = options.scope ?? scopeFor
  return async (c, next) => {
    const raw =
      c.req.method === 'GET' || c.req.method === 'HEAD' ? '' : await readRawBody(c.req.raw)
    c.set('rawBody', raw)
    const principal = await authenticate(c, raw, now())
    c.set('principal', principal.name)
    c.set('caller', principal)
    const needed = scopeOf(c)
    if (needed !== null && !principal.scopes.includes(needed)) {
      throw new ApiError(
        403,
        'forbidden',
        principal.kind === 'webhook'
          ? 'a webhook signature may only start runs (POST /v1/runs); use Authorization: Bearer <token>'
          : `token "${principal.name}" lacks the scope ${needed}; add it in API_TOKENS or use another token`,
        { required: needed, scopes: principal.scopes },
      )
    }
    await next()
  }
}

/**
 * The scope a request needs: deciding approvals and answering questions needs `approvals:write`, reading (an export
 * included) needs `runs:read`, deleting a run `runs:delete`, anything else that writes (start,
 * cancel) needs `runs:write`.
 */
export function scopeFor(c: Context<AppEnv>): Scope {
  if (c.req.method === 'GET' || c.req.method === 'HEAD') return 'runs:read'
  if (c.req.method === 'DELETE') return 'runs:delete'
  if (/\/(approvals|questions)(\/|$)/.test(c.req.path)) return 'approvals:write'
  return 'runs:write'
}

async function authenticate(c: Context<AppEnv>, raw: string, nowMs: number): Promise<Principal> {
  const header = c.req.header('Authorization')
  if (header !== undefined) {
    const match = /^Bearer\s+(.+)$/i.exec(header)
    if (!match) throw new ApiError(401, 'unauthorized', 'Authorization must be "Bearer <token>"')
    // Only the token settings, not the whole configuration: reading a run must keep working
    // while another setting is broken (the run view shows why it waits).
    const tokens = apiTokensFromEnv(c.env as unknown as EnvRecord)
    if (!tokens.length) {
      throw new ApiError(
        401,
        'auth_not_configured',
        'this server has no API_TOKENS (or API_TOKEN) configured',
      )
    }
    const token = await findToken(tokens, match[1]!.trim(), c.env.API_TOKEN)
    if (!token) throw new ApiError(401, 'unauthorized', 'invalid API token')
    return { kind: 'token', name: token.name, scopes: token.scopes, runs: token.runs }
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
    // A signature only starts runs: it proves who sent a body, not who may read or decide.
    const startsRun = c.req.method === 'POST' && /^\/v1\/runs\/?$/.test(c.req.path)
    return { kind: 'webhook', name: 'webhook', scopes: startsRun ? ['runs:write'] : [], signature }
  }
  throw new ApiError(
    401,
    'unauthorized',
    `send Authorization: Bearer <token>, or sign the body with ${SIGNATURE_HEADER} and ${TIMESTAMP_HEADER}`,
  )
}
