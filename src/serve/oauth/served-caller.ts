import { insufficientScope, type OAuthResourceAuth } from '@cloudflare/workers-oauth-provider'
import { apiTokensFromEnv } from '../../config/security'
import type { EnvRecord } from '../../config'
import type { Env } from '../../env'
import type { Scope } from '../../security/api-tokens'
import { servedOAuth, type ServedPath } from './served-resources'
import type { ServedCaller } from './served-caller-type'
import { validateServedToken } from './validate-token'
import { errorResponse } from './error-response'

/** A served request's caller, or the answer that refuses it (401 with its challenge, 503). */
export type ServedAuth =
  | { caller: ServedCaller; auth: OAuthResourceAuth | null; refusal?: undefined }
  | { refusal: Response; caller?: undefined }

/**
 * Who calls a served resource (`/mcp`): an OAuth access token issued for it (the person's grant,
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
  return { refusal: await withErrorBody(response, oauth.resource(path)) }
}

/**
 * The answer to a caller that lacks scopes an operation needs: through OAuth the `403`
 * `insufficient_scope` challenge naming them (the client can step up), otherwise `403 forbidden`.
 */
export function scopeRefusal(
  served: { caller: ServedCaller; auth: OAuthResourceAuth | null },
  needed: Scope[],
) {
  const message = `token "${served.caller.name}" lacks ${needed.join(', ')} here; ${
    served.auth && served.caller.client
      ? 'authorize this client again with those scopes'
      : 'add them in API_TOKENS or use another token'
  }`
  const details = { required: needed, scopes: served.caller.scopes }
  if (!served.auth) return errorResponse(403, 'forbidden', message, details)
  const challenge = insufficientScope(served.auth, needed)
  return errorResponse(403, 'insufficient_scope', message, details, challenge.headers)
}

async function apiTokenCaller(request: Request, env: Env): Promise<ServedAuth> {
  const presented = /^Bearer[\t ]+(\S+)$/i.exec(request.headers.get('Authorization') ?? '')?.[1]
  const valid = presented && (await validateServedToken(env, presented, '', async () => null))
  if (valid) return { caller: valid.props, auth: null }
  const headers = new Headers({ 'WWW-Authenticate': 'Bearer realm="edgeloop"' })
  return {
    refusal: presented
      ? errorResponse(401, 'unauthorized', 'invalid API token', undefined, headers)
      : errorResponse(
          401,
          'unauthorized',
          'send Authorization: Bearer <API token>',
          undefined,
          headers,
        ),
  }
}

/**
 * The library's bodiless or RFC 6750 refusal in edgeloop's error shape, its headers kept; any
 * other answer (a CORS preflight's 204) as it is.
 */
async function withErrorBody(response: Response, resource: string): Promise<Response> {
  if (response.status !== 401 && response.status !== 503) return response
  const body = (await response.json().catch(() => null)) as {
    error?: string
    error_description?: string
  } | null
  if (response.status === 401) {
    const code =
      body?.error ??
      (/error="invalid_token"/.test(wwwAuthenticate(response)) ? 'invalid_token' : 'unauthorized')
    const message =
      body?.error_description ??
      (code === 'invalid_token'
        ? `the bearer token is neither an API token nor an access token issued for ${resource}`
        : `send Authorization: Bearer <token>: an API token, or an OAuth access token for ${resource} (see the resource_metadata in WWW-Authenticate)`)
    return errorResponse(401, code, message, undefined, response.headers)
  }
  return errorResponse(
    503,
    'token_check_failed',
    'the bearer token could not be checked just now; retry',
    undefined,
    response.headers,
  )
}

function wwwAuthenticate(response: Response): string {
  return response.headers.get('WWW-Authenticate') ?? ''
}
