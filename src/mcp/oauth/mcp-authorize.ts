/**
 * The two halves of a person's grant, each one `auth()` of the SDK with our provider
 * (docs/mcp.md#oauth): `beginMcpAuthorization` when a person follows a connect link (discovery,
 * client identification, PKCE; the URL to send them to), `finishMcpAuthorization` when the
 * authorization server sends them back (the code exchanged, the tokens stored as their
 * connection). The grant begins as a client's first request would, with the server's own
 * challenge (mcp-challenge.ts). And `revokeMcpTokens`, when a connection is deleted.
 */
import { auth, discoverAuthorizationServerMetadata } from '@modelcontextprotocol/sdk/client/auth.js'
import type { McpServerAuth, McpServerConfig } from '../mcp-servers'
import { McpOAuthError } from './connection-needed'
import { probeMcpChallenge } from './mcp-challenge'
import { McpOAuthProvider, type McpOAuthContext } from './mcp-oauth-provider'
import { oauthFetch } from './oauth-fetch'
import type { StoredConnection } from './oauth-records'

type WithAuth = McpServerConfig & { auth: McpServerAuth }

/** Where to send the person, and what the callback needs kept with the state. */
export interface BegunAuthorization {
  url: URL
  codeVerifier: string
  issuer: string
  /** The issuer the metadata names, when not the URL it was found at (the 2025-03-26 way). */
  metadataIssuer?: string
  /** The server's challenge named its protected-resource metadata here: the callback reads it. */
  resourceMetadataUrl?: string
  /** The server sends `iss` back with the code (RFC 9207): the callback then requires it. */
  issInResponse: boolean
}

export async function beginMcpAuthorization(
  server: WithAuth,
  ctx: McpOAuthContext,
  opts: { state: string; scopes: string | null },
): Promise<BegunAuthorization> {
  let begun: { url: URL; codeVerifier: string } | undefined
  const provider = new McpOAuthProvider(server, ctx, {
    kind: 'begin',
    state: opts.state,
    onAuthorization: (url, codeVerifier) => (begun = { url, codeVerifier }),
  })
  const fetchFn = oauthFetch(server)
  // Asked for by the link (a run's item that needs more scope), else what the server's own
  // challenge names, else (the SDK's order) its metadata's scopes_supported, else the entry's.
  const challenge = await probeMcpChallenge(server.url, fetchFn)
  const scope = opts.scopes ?? challenge.scope
  const result = await auth(provider, {
    serverUrl: server.url,
    ...(scope ? { scope } : {}),
    ...(challenge.resourceMetadataUrl
      ? { resourceMetadataUrl: challenge.resourceMetadataUrl }
      : {}),
    fetchFn,
  })
  if (result !== 'REDIRECT' || !begun || !provider.issuer) {
    throw new McpOAuthError(server.name, 'the authorization server gave no authorization URL')
  }
  const metadata = provider.authorizationServerMetadata as
    { authorization_response_iss_parameter_supported?: boolean } | undefined
  const named = provider.authorizationServerMetadata?.issuer
  return {
    ...begun,
    issuer: provider.issuer,
    ...(named && named !== provider.issuer ? { metadataIssuer: named } : {}),
    ...(challenge.resourceMetadataUrl
      ? { resourceMetadataUrl: challenge.resourceMetadataUrl.href }
      : {}),
    issInResponse: metadata?.authorization_response_iss_parameter_supported === true,
  }
}

export async function finishMcpAuthorization(
  server: WithAuth,
  ctx: McpOAuthContext,
  opts: {
    code: string
    codeVerifier: string
    grantor: string
    issuer: string
    resourceMetadataUrl?: string
  },
): Promise<void> {
  const provider = new McpOAuthProvider(server, ctx, {
    kind: 'finish',
    codeVerifier: opts.codeVerifier,
    grantor: opts.grantor,
    issuer: opts.issuer,
  })
  const result = await auth(provider, {
    serverUrl: server.url,
    authorizationCode: opts.code,
    ...(opts.resourceMetadataUrl ? { resourceMetadataUrl: new URL(opts.resourceMetadataUrl) } : {}),
    fetchFn: oauthFetch(server),
  })
  if (result !== 'AUTHORIZED') {
    throw new McpOAuthError(server.name, 'the authorization code was not exchanged for tokens')
  }
}

/**
 * Tells the authorization server a connection's tokens are no longer wanted (RFC 7009), when it
 * has a revocation endpoint; true when it accepted. Best effort: the connection is deleted anyway.
 */
export async function revokeMcpTokens(
  server: WithAuth,
  ctx: McpOAuthContext,
  connection: StoredConnection,
): Promise<boolean> {
  const issuer = connection.tokens.issuer
  if (!issuer) return false
  const fetchFn = oauthFetch(server)
  const provider = new McpOAuthProvider(server, ctx, { kind: 'use' })
  const metadata = (await discoverAuthorizationServerMetadata(issuer, { fetchFn })) as
    { revocation_endpoint?: string; issuer: string } | undefined
  const endpoint = metadata?.revocation_endpoint
  if (!endpoint || new URL(endpoint).origin !== new URL(issuer).origin) return false
  const client = await provider.clientInformation()
  const revoke = async (token: string, hint: string) => {
    const body = new URLSearchParams({ token, token_type_hint: hint })
    const headers = new Headers({ 'content-type': 'application/x-www-form-urlencoded' })
    if (client?.client_secret) {
      headers.set('authorization', `Basic ${btoa(`${client.client_id}:${client.client_secret}`)}`)
    } else if (client) {
      body.set('client_id', client.client_id)
    }
    const res = await fetchFn(endpoint, { method: 'POST', headers, body })
    return res.ok
  }
  const tokens = connection.tokens
  const refreshed = tokens.refresh_token
    ? await revoke(tokens.refresh_token, 'refresh_token')
    : true
  return (await revoke(tokens.access_token, 'access_token')) && refreshed
}
