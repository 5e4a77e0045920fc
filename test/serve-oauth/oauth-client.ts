/**
 * A real OAuth client for the served agents: the MCP SDK's `auth()` with an OAuthClientProvider
 * that keeps everything in memory, talking to the Worker's own fetch; and the person's side, a
 * browser that opens the authorization URL, fills the consent form and follows its redirect.
 */
import { exports } from 'cloudflare:workers'
import { auth, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js'
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js'
import { expect } from 'vitest'
import { ORIGIN } from '../service/harness'

export const MCP_URL = `${ORIGIN}/mcp`
export const A2A_URL = `${ORIGIN}/a2a`
export const REDIRECT = 'http://127.0.0.1:33418/callback'

/** The Worker's fetch, as the SDK's `fetchFn`. */
export const workerFetch = (url: string | URL, init?: RequestInit) =>
  exports.default.fetch(String(url), init)

/** An MCP client's OAuth state: its registration, PKCE verifier, tokens and where it sent the person. */
export class MemoryClient implements OAuthClientProvider {
  info?: OAuthClientInformationMixed
  saved?: OAuthTokens
  verifier = ''
  authorizationUrl?: URL

  get redirectUrl() {
    return REDIRECT
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'Test <b>MCP</b> client',
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    }
  }
  state() {
    return 'state-123'
  }
  clientInformation() {
    return this.info
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.info = info
  }
  tokens() {
    return this.saved
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier
  }
  codeVerifier() {
    return this.verifier
  }
}

/** The `resource_metadata` URL a 401's challenge names. */
export function resourceMetadataOf(res: Response): URL {
  const challenge = res.headers.get('WWW-Authenticate') ?? ''
  const url = /resource_metadata="([^"]+)"/.exec(challenge)?.[1]
  expect(url, challenge).toBeDefined()
  return new URL(url!)
}

/** Discovery from the 401 through registration to the authorization URL (auth() answers REDIRECT). */
export async function startAuthorization(
  client: MemoryClient,
  scope?: string,
  resource = MCP_URL,
): Promise<URL> {
  const challenge = await workerFetch(resource, { method: 'POST' })
  expect(challenge.status).toBe(401)
  const result = await auth(client, {
    serverUrl: resource,
    resourceMetadataUrl: resourceMetadataOf(challenge),
    ...(scope ? { scope } : {}),
    fetchFn: workerFetch,
  })
  expect(result).toBe('REDIRECT')
  return client.authorizationUrl!
}

/** The consent page the person's browser gets: its form handle and the cookie binding it. */
export async function openConsent(
  url: URL,
): Promise<{ page: string; handle: string; cookie: string }> {
  const res = await workerFetch(url)
  const page = await res.text()
  expect(res.status, page).toBe(200)
  expect(res.headers.get('Content-Type')).toMatch(/^text\/html/)
  const handle = /name="handle" value="([^"]+)"/.exec(page)?.[1]
  const cookie = (res.headers.get('Set-Cookie') ?? '').split(';')[0]!
  expect(handle).toBeDefined()
  expect(cookie).toMatch(/^__Host-oauth-consent/)
  return { page, handle: handle!, cookie }
}

/** The person's answer on the consent page (`approve` unless `decision` says otherwise). */
export function answerConsent(
  url: URL,
  consent: { handle: string; cookie: string },
  fields: { token?: string; scopes?: string[]; decision?: 'approve' | 'deny' },
  headers: Record<string, string> = {},
): Promise<Response> {
  const form = new URLSearchParams({
    handle: consent.handle,
    decision: fields.decision ?? 'approve',
  })
  if (fields.token !== undefined) form.set('token', fields.token)
  for (const scope of fields.scopes ?? []) form.append('scope', scope)
  return workerFetch(url, {
    method: 'POST',
    // The browser would follow it to the client; the test reads where it goes.
    redirect: 'manual',
    headers: {
      cookie: consent.cookie,
      'content-type': 'application/x-www-form-urlencoded',
      ...headers,
    },
    body: form,
  })
}

/** The code in an approved consent's redirect to the client (asserts the redirect). */
export async function codeOf(res: Response): Promise<string> {
  expect(res.status, await res.clone().text()).toBe(302)
  const location = new URL(res.headers.get('Location')!)
  expect(`${location.origin}${location.pathname}`).toBe(REDIRECT)
  expect(location.searchParams.get('state')).toBe('state-123')
  expect(location.searchParams.get('iss')).toBe(ORIGIN)
  return location.searchParams.get('code')!
}

/**
 * The whole flow for `token` granting `scopes` on `resource` (a served path's URL): the client
 * ends holding an access token for it.
 */
export async function authorizeWith(
  token: string,
  scopes: string[],
  resource = MCP_URL,
): Promise<MemoryClient> {
  const client = new MemoryClient()
  const url = await startAuthorization(client, undefined, resource)
  const consent = await openConsent(url)
  const code = await codeOf(await answerConsent(url, consent, { token, scopes }))
  const result = await auth(client, {
    serverUrl: resource,
    authorizationCode: code,
    fetchFn: workerFetch,
  })
  expect(result).toBe('AUTHORIZED')
  return client
}
