/**
 * A small OAuth 2.1 authorization server and the protected-resource side of an MCP server, for
 * the outbound fake: the wire formats of RFC 8414 (metadata), RFC 9728 (protected-resource
 * metadata and the `WWW-Authenticate` challenge), RFC 7591 (dynamic registration), RFC 7636
 * (PKCE, S256 only), RFC 8707 (`resource`), RFC 9207 (`iss` in the answer), RFC 7009
 * (revocation), and the client-credentials grant with a client secret (Basic). The person's
 * consent is simulated: `GET /authorize` answers at once with the redirect a browser would
 * follow. Strict: a request it cannot honour gets the OAuth error a real server sends.
 *
 * Hostile modes for the bad-input tests: metadata naming another issuer, endpoints on another
 * origin, megabytes of metadata, a redirect loop.
 */
import { importJWK, jwtVerify, type JWK } from 'jose'
import { FakeMcp } from './fake-mcp'

export const FAKE_AS_ORIGIN = 'https://auth.test'

interface Grant {
  clientId: string
  resource: string | null
  scope: string | null
  redirectUri: string
  challenge: string
}

interface IssuedToken {
  clientId: string
  resource: string | null
  scope: string | null
  expiresAt: number
  revoked: boolean
}

export interface FakeAuthOptions {
  /** The issuer the metadata names (a mix-up when it is not FAKE_AS_ORIGIN). */
  metadataIssuer?: string
  /** Put the token endpoint on another origin. */
  tokenEndpointElsewhere?: boolean
  /** Pad the metadata to this many bytes. */
  metadataBytes?: number
  /** Answer the metadata with a redirect to itself. */
  redirectLoop?: boolean
  /**
   * Accept client ID metadata documents: an https `client_id` is fetched, and must name itself
   * and the redirect URI asked for (draft-ietf-oauth-client-id-metadata-document).
   */
  clientIdMetadataDocuments?: boolean
  /**
   * The token endpoint fails: `hang` takes requests and never answers (until the client gives
   * up), `reset` breaks each connection at once.
   */
  tokenEndpoint?: 'hang' | 'reset'
}

export class FakeAuthServer {
  readonly registered = new Map<string, { redirectUris: string[] }>()
  readonly #codes = new Map<string, Grant>()
  readonly tokens = new Map<string, IssuedToken>()
  readonly #refresh = new Map<string, IssuedToken & { token: string }>()
  /** Pre-registered clients that prove themselves with a private-key JWT: id → public JWK. */
  readonly publicKeys = new Map<string, JWK>()
  /** Pre-registered confidential clients (client credentials): id → secret. */
  readonly secrets = new Map<string, string>()
  /** Every form posted to /token, in order. */
  readonly tokenRequests: Record<string, string>[] = []
  /** Every client ID metadata document URL it fetched, in order. */
  readonly clientDocuments: string[] = []
  readonly revocations: string[] = []
  /** How long an access token lives, in seconds. */
  accessTtl = 3600
  options: FakeAuthOptions = {}
  #n = 0

  /**
   * `issuer`: FAKE_AS_ORIGIN, or an issuer with a path (`https://mcp.test/oauth`, as a 2025-03-26
   * MCP server hosts its own): the endpoints are under it, the metadata at the origin's root
   * well-known (where a 2025-03-26 client looks).
   */
  constructor(readonly issuer: string = FAKE_AS_ORIGIN) {}

  readonly handler = async (req: Request): Promise<Response> => {
    const url = new URL(req.url)
    const under = new URL(this.issuer).pathname.replace(/\/$/, '')
    if (url.pathname === '/.well-known/oauth-authorization-server') return this.#metadata(req)
    if (under)
      url.pathname = url.pathname.startsWith(`${under}/`) ? url.pathname.slice(under.length) : '/'
    if (url.pathname === '/.well-known/openid-configuration')
      return new Response(null, { status: 404 })
    if (url.pathname === '/register' && req.method === 'POST') return this.#register(req)
    if (url.pathname === '/authorize') return this.#authorize(url)
    if (url.pathname === '/token' && this.options.tokenEndpoint === 'hang') return hang(req)
    if (url.pathname === '/token' && this.options.tokenEndpoint === 'reset') {
      throw new TypeError('Network connection lost.')
    }
    if (url.pathname === '/token' && req.method === 'POST') return this.#token(req)
    if (url.pathname === '/revoke' && req.method === 'POST') return this.#revoke(req)
    return new Response('not found', { status: 404 })
  }

  /** Whether `authorization` is a live access token for `resource` (with `scope`, if given). */
  valid(
    authorization: string | null,
    resource: string,
    scope?: string,
  ): 'ok' | 'invalid' | 'scope' {
    const token = /^Bearer (.+)$/.exec(authorization ?? '')?.[1]
    const t = token ? this.tokens.get(token) : undefined
    if (!t || t.revoked || t.expiresAt <= Date.now() || t.resource !== resource) return 'invalid'
    if (scope && !(t.scope ?? '').split(' ').includes(scope)) return 'scope'
    return 'ok'
  }

  /** Ends every access token at once (as their expiry would). */
  expireAccessTokens(): void {
    for (const t of this.tokens.values()) t.expiresAt = 0
  }

  /** Refuses every refresh token from now on (as a revoked grant does). */
  revokeRefreshTokens(): void {
    this.#refresh.clear()
  }

  #metadata(req: Request): Response {
    const o = this.options
    if (o.redirectLoop) return Response.redirect(req.url, 302)
    const token = o.tokenEndpointElsewhere ? 'https://evil.test/token' : `${this.issuer}/token`
    const body: Record<string, unknown> = {
      issuer: o.metadataIssuer ?? this.issuer,
      authorization_endpoint: `${this.issuer}/authorize`,
      token_endpoint: token,
      registration_endpoint: `${this.issuer}/register`,
      revocation_endpoint: `${this.issuer}/revoke`,
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token', 'client_credentials'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'none'],
      authorization_response_iss_parameter_supported: true,
      scopes_supported: ['read', 'write'],
    }
    if (o.metadataBytes) body.padding = 'x'.repeat(o.metadataBytes)
    if (o.clientIdMetadataDocuments) body.client_id_metadata_document_supported = true
    return Response.json(body)
  }

  async #register(req: Request): Promise<Response> {
    const meta = (await req.json()) as { redirect_uris?: string[] }
    if (!meta.redirect_uris?.length) return oauthError(400, 'invalid_redirect_uri')
    const clientId = `client-${++this.#n}`
    this.registered.set(clientId, { redirectUris: meta.redirect_uris })
    return Response.json(
      { ...meta, client_id: clientId, token_endpoint_auth_method: 'none' },
      { status: 201 },
    )
  }

  async #authorize(url: URL): Promise<Response> {
    const q = (k: string) => url.searchParams.get(k)
    const client =
      this.registered.get(q('client_id') ?? '') ?? (await this.#clientDocument(q('client_id')))
    const redirectUri = q('redirect_uri') ?? ''
    if (!client || !client.redirectUris.includes(redirectUri)) {
      return oauthError(400, 'invalid_client')
    }
    if (
      q('response_type') !== 'code' ||
      q('code_challenge_method') !== 'S256' ||
      !q('code_challenge')
    ) {
      return oauthError(400, 'invalid_request')
    }
    const code = `code-${++this.#n}`
    this.#codes.set(code, {
      clientId: q('client_id')!,
      resource: q('resource'),
      scope: q('scope'),
      redirectUri,
      challenge: q('code_challenge')!,
    })
    const back = new URL(redirectUri)
    back.searchParams.set('code', code)
    back.searchParams.set('state', q('state') ?? '')
    back.searchParams.set('iss', this.issuer)
    return new Response(null, { status: 302, headers: { location: back.href } })
  }

  /** The client a client ID metadata document describes (fetched from its URL), or undefined. */
  async #clientDocument(clientId: string | null): Promise<{ redirectUris: string[] } | undefined> {
    if (!this.options.clientIdMetadataDocuments || !clientId?.startsWith('https://')) {
      return undefined
    }
    this.clientDocuments.push(clientId)
    const res = await fetch(clientId)
    if (!res.ok) return undefined
    const doc = (await res.json()) as { client_id?: string; redirect_uris?: string[] }
    // The document must name the URL it was fetched from as its client id.
    if (doc.client_id !== clientId) return undefined
    return { redirectUris: doc.redirect_uris ?? [] }
  }

  async #token(req: Request): Promise<Response> {
    const form = Object.fromEntries(new URLSearchParams(await req.text()))
    this.tokenRequests.push(form)
    if (form.grant_type === 'authorization_code') {
      const grant = this.#codes.get(form.code ?? '')
      this.#codes.delete(form.code ?? '')
      if (!grant || grant.clientId !== form.client_id || grant.redirectUri !== form.redirect_uri) {
        return oauthError(400, 'invalid_grant')
      }
      if ((await s256(form.code_verifier ?? '')) !== grant.challenge) {
        return oauthError(400, 'invalid_grant')
      }
      if ((form.resource ?? null) !== grant.resource) return oauthError(400, 'invalid_target')
      return this.#issue(grant.clientId, grant.resource, grant.scope, true)
    }
    if (form.grant_type === 'refresh_token') {
      const old = this.#refresh.get(form.refresh_token ?? '')
      if (!old) return oauthError(400, 'invalid_grant')
      this.#refresh.delete(old.token)
      return this.#issue(old.clientId, old.resource, old.scope, true)
    }
    if (form.grant_type === 'client_credentials' && form.client_assertion) {
      const id = await this.#assertedClient(form)
      if (!id) return oauthError(401, 'invalid_client')
      return this.#issue(id, form.resource ?? null, form.scope ?? null, false)
    }
    if (form.grant_type === 'client_credentials') {
      const basic = /^Basic (.+)$/.exec(req.headers.get('authorization') ?? '')?.[1]
      const [id, secret] = basic ? atob(basic).split(':').map(decodeURIComponent) : []
      if (!id || this.secrets.get(id) !== secret) return oauthError(401, 'invalid_client')
      return this.#issue(id, form.resource ?? null, form.scope ?? null, false)
    }
    return oauthError(400, 'unsupported_grant_type')
  }

  /** The client a private-key JWT assertion (RFC 7523) proves, or null. */
  async #assertedClient(form: Record<string, string>): Promise<string | null> {
    if (form.client_assertion_type !== 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer') {
      return null
    }
    for (const [id, jwk] of this.publicKeys) {
      try {
        const key = await importJWK(jwk, 'ES256')
        const { payload } = await jwtVerify(form.client_assertion!, key, {
          issuer: id,
          subject: id,
          audience: [this.issuer, `${this.issuer}/token`],
        })
        if (payload.jti) return id
      } catch {
        // Not this client's key, or not a valid assertion.
      }
    }
    return null
  }

  #issue(clientId: string, resource: string | null, scope: string | null, refresh: boolean) {
    const access = `at-${++this.#n}-${crypto.randomUUID()}`
    const base = { clientId, resource, scope, revoked: false }
    this.tokens.set(access, { ...base, expiresAt: Date.now() + this.accessTtl * 1000 })
    const body: Record<string, unknown> = {
      access_token: access,
      token_type: 'Bearer',
      expires_in: this.accessTtl,
      ...(scope ? { scope } : {}),
    }
    if (refresh) {
      const token = `rt-${++this.#n}-${crypto.randomUUID()}`
      this.#refresh.set(token, { ...base, expiresAt: Infinity, token })
      body.refresh_token = token
    }
    return Response.json(body, { headers: { 'cache-control': 'no-store' } })
  }

  async #revoke(req: Request): Promise<Response> {
    const form = new URLSearchParams(await req.text())
    const token = form.get('token') ?? ''
    this.revocations.push(token)
    const access = this.tokens.get(token)
    if (access) access.revoked = true
    this.#refresh.delete(token)
    return new Response(null, { status: 200 })
  }
}

/**
 * An MCP server (FakeMcp, the SDK's server) behind this authorization server: it serves its
 * protected-resource metadata and answers a request without a live token with 401 and the
 * challenge that points at it, and one without `scope` (when set) with 403 insufficient_scope.
 */
export function protectedMcp(
  auth: FakeAuthServer,
  host: string,
  opts: {
    scope?: string
    resource?: string
    /**
     * Where its protected-resource metadata lives: the well-known path (default), a path only
     * its challenge names, or none at all (a 2025-03-26 server, whose challenge names nothing).
     */
    prmPath?: string | null
  } = {},
): {
  mcp: FakeMcp
  handler: (req: Request) => Promise<Response>
  /** Change what the server asks for while a test runs (`scope`: a 403 without it). */
  access: { scope?: string }
} {
  const mcp = new FakeMcp()
  const access = { ...(opts.scope ? { scope: opts.scope } : {}) } as { scope?: string }
  const resource = opts.resource ?? `https://${host}/mcp`
  const prmPath =
    opts.prmPath === undefined ? '/.well-known/oauth-protected-resource/mcp' : opts.prmPath
  const prm = prmPath ? `https://${host}${prmPath}` : null
  mcp.authorize = (req) => {
    const verdict = auth.valid(
      req.headers.get('authorization'),
      `https://${host}/mcp`,
      access.scope,
    )
    if (verdict === 'ok') return null
    if (verdict === 'scope') {
      return new Response('insufficient scope', {
        status: 403,
        headers: {
          'www-authenticate': `Bearer error="insufficient_scope", scope="${access.scope}"${prm ? `, resource_metadata="${prm}"` : ''}`,
        },
      })
    }
    return new Response('unauthorized', {
      status: 401,
      headers: {
        'www-authenticate': prm ? `Bearer resource_metadata="${prm}", scope="read"` : 'Bearer',
      },
    })
  }
  const handler = async (req: Request): Promise<Response> => {
    const path = new URL(req.url).pathname
    if (prmPath && path === prmPath) {
      return Response.json({
        resource,
        authorization_servers: [auth.issuer],
        scopes_supported: ['read', 'write'],
        bearer_methods_supported: ['header'],
      })
    }
    if (path.startsWith('/.well-known/')) return new Response('not found', { status: 404 })
    return mcp.handler(req)
  }
  return { mcp, handler, access }
}

/** A server that took the request and never answers: only the client's abort ends the wait. */
function hang(req: Request): Promise<Response> {
  return new Promise((_, reject) => {
    const signal = req.signal
    if (signal.aborted) reject(signal.reason)
    signal.addEventListener('abort', () => reject(signal.reason), { once: true })
  })
}

function oauthError(status: number, error: string): Response {
  return Response.json({ error }, { status, headers: { 'cache-control': 'no-store' } })
}

async function s256(verifier: string): Promise<string> {
  const digest = new Uint8Array(
    await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier)),
  )
  let binary = ''
  for (const b of digest) binary += String.fromCharCode(b)
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')
}
