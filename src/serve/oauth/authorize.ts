import { AuthorizationError, type OAuthHelpers } from '@cloudflare/workers-oauth-provider'
import { apiTokensFromEnv } from '../../config/security'
import type { EnvRecord } from '../../config'
import type { Env } from '../../env'
import { logEvent } from '../../runs/log'
import { findToken, SCOPES, type Scope } from '../../security/api-tokens'
import { consentPage } from './consent-page'
import { errorPage, type Remedy } from './error-page'
import { errorResponse } from './error-response'
import { grantPropsFor } from './grant'
import { htmlResponse } from './html-page'
import { servedOAuth } from './served-resources'

// The consent form holds a handle, a token and a few scopes: a larger body is not one.
const MAX_FORM_BYTES = 8 * 1024

/**
 * The authorization endpoint (docs/serving.md#authorization). GET validates the client's request
 * (client, redirect URI, PKCE, resource) and shows the consent page; POST takes the person's
 * answer: an API token that proves who they are and the scopes to grant, which must all be that
 * token's. The grant is the token's, by name: the client then acts as that token, never beyond it.
 * A refusal not sent back to the client is a page when `browser` (the request prefers HTML: a
 * person is reading), else edgeloop's JSON error.
 */
export async function authorize(request: Request, env: Env, browser = false): Promise<Response> {
  const refuse = refusal(browser)
  const oauth = servedOAuth(env)
  if (!oauth) return oauthOff(refuse)
  const helpers = oauth.authorizationServer.getOAuthApi(env)
  try {
    return request.method === 'POST'
      ? await answer(request, env, helpers, refuse)
      : await ask(request, helpers)
  } catch (err) {
    if (!(err instanceof AuthorizationError)) throw err
    // Back to the client only once its redirect URI was checked (RFC 6749 §4.1.2.1); otherwise
    // shown here, where the person can only start again from the app.
    if (err.redirectTo) return Response.redirect(err.redirectTo, 302)
    return refuse({ status: 400, code: err.code, message: err.description, remedy: 'start_again' })
  }
}

/** How a refusal is answered: what went wrong, and who can mend it (for a person's page). */
type Refuse = (input: {
  status: number
  code: string
  message: string
  remedy: Remedy
  details?: unknown
}) => Response

function refusal(browser: boolean): Refuse {
  return ({ status, code, message, remedy, details }) =>
    browser
      ? errorPage({ status, code, message, remedy })
      : errorResponse(status, code, message, details)
}

/** The answer when PUBLIC_URL is unset: no canonical resource, so no authorization server. */
export function oauthOff(refuse: Refuse = refusal(false)): Response {
  return refuse({
    status: 404,
    code: 'oauth_not_configured',
    message:
      "OAuth for served agents needs PUBLIC_URL (this Worker's https origin); until it is set, send an API token as the bearer token",
    remedy: 'operator',
  })
}

async function ask(request: Request, helpers: OAuthHelpers): Promise<Response> {
  const authRequest = await helpers.parseAuthRequest(request)
  // First the description: a failed lookup leaves nothing stored.
  const details = await helpers.describeConsent(authRequest)
  const consent = await helpers.beginConsent(authRequest)
  return htmlResponse(200, consentPage(details, consent.handle), consent.headers)
}

async function answer(
  request: Request,
  env: Env,
  helpers: OAuthHelpers,
  refuse: Refuse,
): Promise<Response> {
  const length = Number(request.headers.get('Content-Length') ?? '0')
  if (length > MAX_FORM_BYTES) {
    return refuse({
      status: 413,
      code: 'payload_too_large',
      message: `the consent form is at most ${MAX_FORM_BYTES} bytes`,
      remedy: 'correct_form',
    })
  }
  const form = await request.formData().catch(() => null)
  if (!form)
    return refuse({
      status: 400,
      code: 'invalid_request',
      message: 'send the consent form (application/x-www-form-urlencoded)',
      remedy: 'start_again',
    })
  const handle = String(form.get('handle') ?? '')
  if (!handle)
    return refuse({
      status: 400,
      code: 'invalid_request',
      message: 'the consent form has no handle; open the authorization link again',
      remedy: 'start_again',
    })
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
    return refuse({
      status: 401,
      code: 'invalid_token',
      message: "that is not a valid edgeloop API token; paste one of this deployment's API tokens",
      remedy: 'correct_form',
    })
  }
  const chosen = form.getAll('scope').map(String)
  const unknown = chosen.filter((s) => !SCOPES.includes(s as Scope))
  if (!chosen.length || unknown.length) {
    return refuse({
      status: 400,
      code: 'invalid_scope',
      message: `choose one or more of ${SCOPES.join(', ')}`,
      remedy: 'correct_form',
      details: { unknown },
    })
  }
  const beyond = chosen.filter((s) => !token.scopes.includes(s as Scope))
  if (beyond.length) {
    return refuse({
      status: 403,
      code: 'invalid_scope',
      message: `token "${token.name}" does not hold ${beyond.join(', ')}; grant only its own scopes (${token.scopes.join(', ')})`,
      remedy: 'correct_form',
      details: { beyond, scopes: token.scopes },
    })
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
