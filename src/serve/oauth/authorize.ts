import { AuthorizationError, type OAuthHelpers } from '@cloudflare/workers-oauth-provider'
import { apiTokensFromEnv } from '../../config/security'
import type { EnvRecord } from '../../config'
import type { Env } from '../../env'
import { logEvent } from '../../runs/log'
import { findToken, SCOPES, type Scope } from '../../security/api-tokens'
import { consentPage } from './consent-page'
import { errorResponse } from './error-response'
import { grantPropsFor } from './grant'
import { servedOAuth } from './served-resources'

// The consent form holds a handle, a token and a few scopes: a larger body is not one.
const MAX_FORM_BYTES = 8 * 1024

/**
 * The authorization endpoint (docs/serving.md#authorization). GET validates the client's request
 * (client, redirect URI, PKCE, resource) and shows the consent page; POST takes the person's
 * answer: an API token that proves who they are and the scopes to grant, which must all be that
 * token's. The grant is the token's, by name: the client then acts as that token, never beyond it.
 */
export async function authorize(request: Request, env: Env): Promise<Response> {
  const oauth = servedOAuth(env)
  if (!oauth) return oauthOff()
  const helpers = oauth.authorizationServer.getOAuthApi(env)
  try {
    return request.method === 'POST'
      ? await answer(request, env, helpers)
      : await ask(request, helpers)
  } catch (err) {
    if (!(err instanceof AuthorizationError)) throw err
    // Back to the client only once its redirect URI was checked; otherwise shown here.
    if (err.redirectTo) return Response.redirect(err.redirectTo, 302)
    return errorResponse(400, err.code, err.description)
  }
}

/** The answer when PUBLIC_URL is unset: no canonical resource, so no authorization server. */
export function oauthOff(): Response {
  return errorResponse(
    404,
    'oauth_not_configured',
    "OAuth for served agents needs PUBLIC_URL (this Worker's https origin); until it is set, send an API token as the bearer token",
  )
}

async function ask(request: Request, helpers: OAuthHelpers): Promise<Response> {
  const authRequest = await helpers.parseAuthRequest(request)
  // First the description: a failed lookup leaves nothing stored.
  const details = await helpers.describeConsent(authRequest)
  const consent = await helpers.beginConsent(authRequest)
  const headers = consent.headers
  headers.set('Content-Type', 'text/html; charset=utf-8')
  headers.set(
    'Content-Security-Policy',
    "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
  )
  return new Response(consentPage(details, consent.handle), { headers })
}

async function answer(request: Request, env: Env, helpers: OAuthHelpers): Promise<Response> {
  const length = Number(request.headers.get('Content-Length') ?? '0')
  if (length > MAX_FORM_BYTES) {
    return errorResponse(
      413,
      'payload_too_large',
      `the consent form is at most ${MAX_FORM_BYTES} bytes`,
    )
  }
  const form = await request.formData().catch(() => null)
  if (!form)
    return errorResponse(
      400,
      'invalid_request',
      'send the consent form (application/x-www-form-urlencoded)',
    )
  const handle = String(form.get('handle') ?? '')
  if (!handle)
    return errorResponse(
      400,
      'invalid_request',
      'the consent form has no handle; open the authorization link again',
    )
  if (form.get('decision') === 'deny') {
    const denied = await helpers.denyConsent(request, handle)
    return new Response(null, { status: 302, headers: denied.headers })
  }
  // Checked before the handle is used: a mistyped token or scope can be corrected on the page.
  const presented = String(form.get('token') ?? '').trim()
  const token = presented
    ? await findToken(apiTokensFromEnv(env as unknown as EnvRecord), presented, env.API_TOKEN)
    : undefined
  if (!token) {
    return errorResponse(
      401,
      'invalid_token',
      "that is not a valid edgeloop API token; paste one of this deployment's API tokens",
    )
  }
  const chosen = form.getAll('scope').map(String)
  const unknown = chosen.filter((s) => !SCOPES.includes(s as Scope))
  if (!chosen.length || unknown.length) {
    return errorResponse(400, 'invalid_scope', `choose one or more of ${SCOPES.join(', ')}`, {
      unknown,
    })
  }
  const beyond = chosen.filter((s) => !token.scopes.includes(s as Scope))
  if (beyond.length) {
    return errorResponse(
      403,
      'invalid_scope',
      `token "${token.name}" does not hold ${beyond.join(', ')}; grant only its own scopes (${token.scopes.join(', ')})`,
      { beyond, scopes: token.scopes },
    )
  }
  const approved = await helpers.approveConsent(request, handle, { scope: chosen })
  const { redirectTo } = await helpers.completeAuthorization({
    request: approved.request,
    userId: token.name,
    metadata: { token: token.name },
    scope: chosen,
    props: await grantPropsFor(token, presented),
  })
  // Who let which client act for which token: the trail an operator reads when revoking.
  logEvent(env, 'oauth_authorized', {
    token: token.name,
    client: approved.request.clientId,
    scopes: chosen,
  })
  approved.headers.set('Location', redirectTo)
  return new Response(null, { status: 302, headers: approved.headers })
}
