import { insufficientScope, type OAuthResourceAuth } from '@cloudflare/workers-oauth-provider'
import { apiTokensFromEnv } from '../../config/security'
import type { EnvRecord } from '../../config'
import type { Env } from '../../env'
import type { Scope } from '../../security/api-tokens'
import { servedOAuth, type ServedPath } from './served-resources'
import type { ServedCaller } from './served-caller-type'
import { validateServedToken } from './validate-token'
import type { ServedRefusal } from './served-refusal'

/** A served request's caller, with the token the resource server verified (null when it did not). */
export interface Served {
  caller: ServedCaller
  auth: OAuthResourceAuth | null
}

/** A served request's caller, or why not. */
export type ServedAuth =
  (Served & { refusal?: undefined }) | { refusal: ServedRefusal; caller?: undefined }

/**
 * Who calls a served resource (`/mcp`, `/a2a`): an OAuth access token issued for it (the person's grant,
 * checked against the API token it came from), or a plain API token; anything else is refused
 * with `401` and `WWW-Authenticate` naming the resource's metadata (RFC 9728), so a client can
 * discover where to authorize. Reads only headers: the body stays for the route.
 */
export async function servedCaller(
  request: Request,
  env: Env,
  path: ServedPath,
): Promise<ServedAuth> {
  // A broken API_TOKENS is the operator's to fix, not a bad token: it throws its ConfigError.
  apiTokensFromEnv(env as unknown as EnvRecord)
  const oauth = servedOAuth(env)
  // OAuth binds tokens to PUBLIC_URL's origin; elsewhere (or with no PUBLIC_URL) only API tokens.
  if (!oauth || new URL(request.url).origin !== oauth.origin) return apiTokenCaller(request, env)
  const context = { props: undefined as ServedCaller | undefined, auth: null as unknown }
  const response = await oauth.resources[path].fetch(
    request,
    env,
    context as unknown as ExecutionContext,
  )
  if (context.props) return { caller: context.props, auth: context.auth as OAuthResourceAuth }
  return { refusal: await refusalOf(response, oauth.resource(path)) }
}

/**
 * The refusal for a caller that lacks scopes an operation needs: `403` with the RFC 6750
 * `insufficient_scope` challenge naming them, and through the resource server its metadata, so
 * an OAuth client can ask the person for more (MCP's step-up). An API token's scopes change only
 * in its configuration: its refusal is `forbidden`, as on `/v1/*`.
 */
export function scopeRefusal(served: Served, needed: Scope[]): ServedRefusal {
  const details = { required: needed, scopes: served.caller.scopes }
  const lacks = `token "${served.caller.name}" lacks the scope${needed.length > 1 ? 's' : ''} ${needed.join(', ')}`
  const headers = served.auth
    ? insufficientScope(served.auth, needed).headers
    : new Headers({
        'WWW-Authenticate': `Bearer realm="edgeloop", error="insufficient_scope", scope="${needed.join(' ')}"`,
      })
  if (!served.caller.client) {
    const message = `${lacks}; add it in API_TOKENS or use another token`
    return { status: 403, code: 'forbidden', message, details, headers }
  }
  const message = `${lacks}; authorize this client again with it`
  return { status: 403, code: 'insufficient_scope', message, details, headers }
}

async function apiTokenCaller(request: Request, env: Env): Promise<ServedAuth> {
  const presented = /^Bearer[\t ]+(\S+)$/i.exec(request.headers.get('Authorization') ?? '')?.[1]
  const valid = presented && (await validateServedToken(env, presented, '', async () => null))
  if (valid) return { caller: valid.props, auth: null }
  const headers = new Headers({ 'WWW-Authenticate': 'Bearer realm="edgeloop"' })
  const message = presented ? 'invalid API token' : 'send Authorization: Bearer <API token>'
  return { refusal: { status: 401, code: 'unauthorized', message, headers } }
}

/** What the resource server answered instead of calling the route, as a refusal. */
async function refusalOf(response: Response, resource: string): Promise<ServedRefusal> {
  const headers = new Headers(response.headers)
  headers.delete('Content-Type')
  headers.delete('Content-Length')
  if (response.status !== 401) {
    const message = 'the bearer token could not be checked just now; retry'
    return { status: 503, code: 'token_check_failed', message, headers }
  }
  const body = (await response.json().catch(() => null)) as {
    error?: string
    error_description?: string
  } | null
  const invalid = /error="invalid_token"/.test(headers.get('WWW-Authenticate') ?? '')
  const code = body?.error ?? (invalid ? 'invalid_token' : 'unauthorized')
  const message =
    body?.error_description ??
    (invalid
      ? `the bearer token is neither an API token nor an access token issued for ${resource}`
      : `send Authorization: Bearer <token>: an API token, or an OAuth access token for ${resource} (see the resource_metadata in WWW-Authenticate)`)
  return { status: 401, code, message, headers }
}
