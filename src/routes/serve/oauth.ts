import type { Context, MiddlewareHandler } from 'hono'
import { Hono } from 'hono/tiny'
import {
  authorize,
  OAUTH_ENDPOINTS,
  oauthOff,
  refusalResponse,
  servedCaller,
  servedOAuth,
  SERVED_PATHS,
  type ServedOAuth,
  type ServedPath,
  type ServedRefusal,
} from '../../serve/oauth'
import type { Env } from '../../env'
import type { AppEnv } from '../app-env'

/**
 * The OAuth authorization server for served agents (docs/serving.md#authorization), mounted at the
 * root: its metadata (RFC 8414), each served path's protected-resource metadata (RFC 9728), client
 * registration (RFC 7591), the token endpoint (which also revokes) and the consent page. The
 * library answers all but the consent page; with PUBLIC_URL unset each is a 404 that says so.
 */
export const servedOAuthRoutes = new Hono<AppEnv>()

// OPTIONS beside each: browser-based clients preflight, and the library answers the preflight.
const PREFLIGHT = ['OPTIONS']

servedOAuthRoutes.on(
  ['GET', ...PREFLIGHT],
  '/.well-known/oauth-authorization-server',
  byLibrary((oauth) => oauth.authorizationServer),
)
for (const path of SERVED_PATHS) {
  servedOAuthRoutes.on(
    ['GET', ...PREFLIGHT],
    `/.well-known/oauth-protected-resource${path}`,
    byLibrary((oauth) => oauth.resources[path]),
  )
}
for (const endpoint of [OAUTH_ENDPOINTS.token, OAUTH_ENDPOINTS.register]) {
  servedOAuthRoutes.on(
    ['POST', ...PREFLIGHT],
    endpoint,
    byLibrary((oauth) => oauth.authorizationServer),
  )
}
servedOAuthRoutes.on(['GET', 'POST'], OAUTH_ENDPOINTS.authorize, (c) => authorize(c.req.raw, c.env))

/**
 * Authenticates a served path's request (`/mcp`): an OAuth access token issued for it or an API
 * token (`servedCaller`); sets `caller` and `principal` as `requireAuth` does, and `served` for a
 * scope refusal (`scopeRefusal`). Anything else gets the `401` challenge that starts discovery, in
 * edgeloop's error shape unless `answer` renders it in the route's own (a JSON-RPC error, say).
 */
export function requireServedCaller(
  path: ServedPath,
  answer: (c: Context<AppEnv>, refusal: ServedRefusal) => Response = (_, refusal) =>
    refusalResponse(refusal),
): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const served = await servedCaller(c.req.raw, c.env, path)
    if (served.refusal) return answer(c, served.refusal)
    c.set('caller', served.caller)
    c.set('principal', served.caller.name)
    c.set('served', served)
    await next()
  }
}

/** A route the library answers whole, by the role `pick` names; a 404 that says why without PUBLIC_URL. */
function byLibrary(
  pick: (oauth: ServedOAuth) => {
    fetch(request: Request, env: Env, ctx: ExecutionContext): Promise<Response>
  },
) {
  return (c: Context<AppEnv>) => {
    const oauth = servedOAuth(c.env)
    // Hono types the context more narrowly than Workers; it is the platform's object.
    return oauth
      ? pick(oauth).fetch(c.req.raw, c.env, c.executionCtx as ExecutionContext)
      : oauthOff()
  }
}
