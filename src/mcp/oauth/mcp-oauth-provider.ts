/**
 * The SDK's `OAuthClientProvider` for one MCP server and one connection owner, over durable
 * records (oauth-records.ts). The SDK's `auth()` does the protocol (discovery, client
 * identification, PKCE, `resource`, scopes, refresh, token-endpoint authentication); this says
 * where its state lives and what each step of edgeloop's flow does with it:
 *
 * - `use` (a run's session): tokens are read and refreshed; when only a person can help (no grant,
 *   a failed refresh, more scope), `McpConnectionNeeded` is thrown instead of redirecting.
 * - `begin` (the single-use connect link): the authorization URL is built with our `state`, and
 *   the PKCE verifier handed back to be stored with that state.
 * - `finish` (the OAuth callback): the code is exchanged with the stored verifier, and the tokens
 *   are stored as the grantor's connection.
 *
 * Checks the SDK leaves to us: the authorization server's metadata must name the issuer it was
 * discovered at (RFC 8414 §3.3, an issuer mix-up otherwise), and its endpoints must be HTTPS on
 * the issuer's origin, so no code, verifier, secret or refresh token goes anywhere else.
 */
import type {
  OAuthClientProvider,
  OAuthDiscoveryState,
} from '@modelcontextprotocol/sdk/client/auth.js'
import { createPrivateKeyJwtAuth } from '@modelcontextprotocol/sdk/client/auth-extensions.js'
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js'
import type { McpServerAuth, McpServerConfig } from '../mcp-servers'
import {
  McpConnectionNeeded,
  McpOAuthError,
  type ConnectionNeededReason,
} from './connection-needed'
import type { OAuthRecords } from './oauth-records'

/** The Worker's routes the authorization server sends a person back to and reads us from. */
export const OAUTH_CALLBACK_PATH = '/oauth/callback'
export const CLIENT_METADATA_PATH = '/oauth/client-metadata.json'

/** What every flow shares: where state lives, whose connection, the Worker's public origin. */
export interface McpOAuthContext {
  records: OAuthRecords
  /** `deployment`, `token:<name>` or `slack:<user id>`. */
  owner: string
  /** The Worker's public origin (PUBLIC_URL); needed for `auth: "oauth"`. */
  publicUrl?: string
  /**
   * Where edgeloop's client ID metadata document is published (an https URL, its client id):
   * `clientMetadataUrlOf` of the settings. Without it the client registers itself.
   */
  clientMetadataUrl?: string
  now?: () => number
}

export type McpOAuthFlow =
  | { kind: 'use' }
  | {
      kind: 'begin'
      state: string
      /** The authorization URL and PKCE verifier, to keep with `state` until the callback. */
      onAuthorization: (url: URL, codeVerifier: string) => void
    }
  | {
      kind: 'finish'
      codeVerifier: string
      grantor: string
      /** The issuer the authorization was begun with: the code goes to no other. */
      issuer: string
    }

type WithAuth = McpServerConfig & { auth: McpServerAuth }

export class McpOAuthProvider implements OAuthClientProvider {
  readonly #server: WithAuth
  readonly #ctx: McpOAuthContext
  readonly #flow: McpOAuthFlow
  #verifier: string | undefined
  #refreshFailed = false
  /** An OAuth request the authorization server failed (no answer in time, a redirect, too big). */
  #unanswered: McpOAuthError | undefined
  /** The issuer and metadata discovery found, checked (saveDiscoveryState). */
  #discovered: OAuthDiscoveryState | undefined
  readonly addClientAuthentication: OAuthClientProvider['addClientAuthentication']

  constructor(server: WithAuth, ctx: McpOAuthContext, flow: McpOAuthFlow) {
    this.#server = server
    this.#ctx = ctx
    this.#flow = flow
    const auth = server.auth
    if (auth.kind === 'oauth' && !ctx.publicUrl) {
      throw new McpOAuthError(server.name, 'PUBLIC_URL is not set, so there is no callback URL')
    }
    if (auth.kind === 'client_credentials' && auth.privateKey) {
      this.addClientAuthentication = createPrivateKeyJwtAuth({
        issuer: auth.clientId,
        subject: auth.clientId,
        privateKey: auth.privateKey,
        alg: auth.keyAlg ?? 'RS256',
      })
    }
  }

  get redirectUrl(): string | undefined {
    if (this.#server.auth.kind !== 'oauth') return undefined
    return new URL(OAUTH_CALLBACK_PATH, this.#ctx.publicUrl).href
  }

  /**
   * The client ID metadata document's URL (when no client is pre-registered), which the SDK
   * uses as the client id when the authorization server says it supports such documents. Only
   * over https (the context has none otherwise): an authorization server fetches it to learn
   * who edgeloop is; a Worker on http://localhost registers itself instead.
   */
  get clientMetadataUrl(): string | undefined {
    if (this.#server.auth.kind !== 'oauth' || this.#server.auth.clientId) return undefined
    return this.#ctx.clientMetadataUrl
  }

  get clientMetadata(): OAuthClientMetadata {
    const auth = this.#server.auth
    if (auth.kind === 'client_credentials') {
      return {
        redirect_uris: [],
        grant_types: ['client_credentials'],
        token_endpoint_auth_method: auth.privateKey ? 'private_key_jwt' : 'client_secret_basic',
        client_name: 'edgeloop',
        ...(auth.scopes ? { scope: auth.scopes } : {}),
      }
    }
    return {
      ...clientMetadataDocument(this.#ctx.publicUrl!),
      ...(auth.scopes ? { scope: auth.scopes } : {}),
    }
  }

  state(): string {
    // Outside `begin` the URL is never followed: redirectToAuthorization throws instead.
    return this.#flow.kind === 'begin' ? this.#flow.state : 'not-followed'
  }

  async clientInformation(): Promise<OAuthClientInformationMixed | undefined> {
    const auth = this.#server.auth
    if (auth.clientId) {
      // Pre-registered (settings): presented as configured, to whichever issuer discovery finds.
      return {
        client_id: auth.clientId,
        ...(auth.clientSecret ? { client_secret: auth.clientSecret } : {}),
      }
    }
    return (await this.#ctx.records.client(this.#server.name)) ?? undefined
  }

  async saveClientInformation(info: OAuthClientInformationMixed): Promise<void> {
    if (this.#server.auth.clientId) return
    await this.#ctx.records.saveClient(this.#server.name, info)
  }

  async tokens(): Promise<OAuthTokens | undefined> {
    // A new authorization (a connect link) is begun whatever is stored: more scope, a new grant.
    if (this.#flow.kind === 'begin') return undefined
    const stored = await this.#ctx.records.connection(this.#server.name, this.#ctx.owner)
    return stored?.tokens
  }

  async saveTokens(tokens: OAuthTokens): Promise<void> {
    const { records, owner } = this.#ctx
    const now = (this.#ctx.now ?? Date.now)()
    const before = await records.connection(this.#server.name, owner)
    const grantor =
      this.#flow.kind === 'finish'
        ? this.#flow.grantor
        : this.#server.auth.kind === 'client_credentials'
          ? 'client_credentials'
          : (before?.grantor ?? 'unknown')
    await records.saveConnection(this.#server.name, owner, {
      tokens,
      grantor,
      scopes: tokens.scope ?? before?.scopes ?? null,
      grantedAt: this.#flow.kind === 'use' && before ? before.grantedAt : now,
      expiresAt: typeof tokens.expires_in === 'number' ? now + tokens.expires_in * 1000 : null,
    })
  }

  redirectToAuthorization(url: URL): void {
    if (this.#flow.kind !== 'begin') {
      // The SDK begins a new authorization after a refresh that failed this way, as after one
      // refused: the grant still stands, and the authorization server is what failed.
      if (this.#unanswered) throw this.#unanswered
      throw this.#needed(this.#refreshFailed ? 'refresh_failed' : 'no_grant', url)
    }
    this.#flow.onAuthorization(url, this.#verifier!)
  }

  saveCodeVerifier(verifier: string): void {
    this.#verifier = verifier
  }

  codeVerifier(): string {
    if (this.#flow.kind !== 'finish') {
      throw new McpOAuthError(this.#server.name, 'no authorization is being completed')
    }
    return this.#flow.codeVerifier
  }

  prepareTokenRequest(scope?: string): URLSearchParams | undefined {
    if (this.#server.auth.kind !== 'client_credentials') return undefined
    return new URLSearchParams({ grant_type: 'client_credentials', ...(scope ? { scope } : {}) })
  }

  async invalidateCredentials(
    scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery',
  ): Promise<void> {
    const { records, owner } = this.#ctx
    if ((scope === 'all' || scope === 'client') && !this.#server.auth.clientId) {
      await records.deleteClient(this.#server.name)
    }
    if (scope === 'all' || scope === 'tokens') {
      // The authorization server refused the refresh token: the grant is gone, a person must
      // grant again (a `connect` item), so nothing dead is kept.
      if (await records.deleteConnection(this.#server.name, owner)) this.#refreshFailed = true
    }
  }

  /** An OAuth request of this flow failed at the authorization server (oauth-fetch.ts). */
  authFailed(err: unknown): void {
    if (err instanceof McpOAuthError) this.#unanswered = err
  }

  /** Called by `auth()` right after discovery, before anything is sent or stored: checked here. */
  saveDiscoveryState(state: OAuthDiscoveryState): void {
    checkDiscovery(this.#server.name, state)
    if (this.#flow.kind === 'finish' && !sameUrl(state.authorizationServerUrl, this.#flow.issuer)) {
      throw new McpOAuthError(
        this.#server.name,
        `issuer mix-up: the authorization was begun with ${this.#flow.issuer}, and the server now names ${state.authorizationServerUrl}; nothing was exchanged`,
      )
    }
    this.#discovered = state
  }

  /** The issuer discovery found (after an `auth()` that got that far). */
  get issuer(): string | undefined {
    return this.#discovered?.authorizationServerUrl
  }

  /** The metadata discovery found: the revocation endpoint, whether `iss` comes back (RFC 9207). */
  get authorizationServerMetadata(): OAuthDiscoveryState['authorizationServerMetadata'] {
    return this.#discovered?.authorizationServerMetadata
  }

  #needed(reason: ConnectionNeededReason, url?: URL): McpConnectionNeeded {
    const scopes = url?.searchParams.get('scope') ?? this.#server.auth.scopes ?? null
    return new McpConnectionNeeded(this.#server.name, this.#ctx.owner, scopes, reason)
  }
}

/**
 * The client ID metadata document the Worker serves at CLIENT_METADATA_PATH; its `client_id` is
 * the URL it is published at (`clientId`, else PUBLIC_URL's), as the document must say.
 */
export function clientMetadataDocument(
  publicUrl: string,
  clientId: string = new URL(CLIENT_METADATA_PATH, publicUrl).href,
): OAuthClientMetadata & { client_id: string } {
  return {
    client_id: clientId,
    client_name: 'edgeloop',
    client_uri: new URL('/', publicUrl).href,
    redirect_uris: [new URL(OAUTH_CALLBACK_PATH, publicUrl).href],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  }
}

/**
 * The authorization server's metadata names the issuer it was found at, and sends every request
 * to HTTPS endpoints of that issuer's origin; otherwise nothing goes on.
 */
function checkDiscovery(server: string, state: OAuthDiscoveryState): void {
  const found = state.authorizationServerUrl
  const metadata = state.authorizationServerMetadata
  if (!metadata) return // 2025-03-26 fallback: the default endpoints on the issuer itself.
  // Without protected-resource metadata (a 2025-03-26 server) nobody named an issuer: the
  // metadata was looked up at the MCP server's own origin, and may name an issuer under it
  // (`https://mcp.example.com/oauth`). Its endpoints are then held to that issuer's origin.
  const legacy =
    !state.resourceMetadata && new URL(metadata.issuer).origin === new URL(found).origin
  const issuer = legacy ? metadata.issuer : found
  if (!sameUrl(metadata.issuer, issuer)) {
    throw new McpOAuthError(
      server,
      `issuer mix-up: the metadata found for ${issuer} names the issuer ${metadata.issuer}`,
    )
  }
  const origin = new URL(issuer).origin
  const endpoints = {
    authorization_endpoint: metadata.authorization_endpoint,
    token_endpoint: metadata.token_endpoint,
    registration_endpoint: metadata.registration_endpoint,
    revocation_endpoint: (metadata as { revocation_endpoint?: string }).revocation_endpoint,
  }
  for (const [field, value] of Object.entries(endpoints)) {
    if (value === undefined) continue
    const url = new URL(value)
    if (!(url.protocol === 'https:' || isLoopback(url)) || url.origin !== origin) {
      throw new McpOAuthError(
        server,
        `the authorization server's ${field} (${url.origin}) is not on its issuer's origin ${origin} over HTTPS (or http on this machine); edgeloop sends codes and tokens nowhere else`,
      )
    }
  }
}

/**
 * An authorization server on this very machine (a local development one) may speak plain http:
 * what it is sent never crosses a network, as OAuth 2.1 allows for loopback redirect URIs.
 */
function isLoopback(url: URL): boolean {
  return url.protocol === 'http:' && ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname)
}

function sameUrl(a: string, b: string): boolean {
  const strip = (u: string) => u.replace(/\/+$/, '')
  return strip(a) === strip(b)
}
