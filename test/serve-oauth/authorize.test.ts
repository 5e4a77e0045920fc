/**
 * /mcp as an OAuth 2.1 protected resource (docs/serving.md#authorization): a real client (the MCP
 * SDK's auth()) discovers the authorization server from the 401, registers, sends the person to
 * the consent page with PKCE, exchanges the code, and its access token is accepted as the API
 * token the person proved, with the scopes they granted. Plain API tokens keep working.
 */
import { env } from 'cloudflare:workers'
import { auth } from '@modelcontextprotocol/sdk/client/auth.js'
import { describe, expect, it } from 'vitest'
import type { Env } from '../../src/env'
import { scopeRefusal, servedCaller } from '../../src/serve/oauth'
import { ORIGIN } from '../service/harness'
import {
  answerConsent,
  authorizeWith,
  codeOf,
  MCP_URL,
  MemoryClient,
  openConsent,
  resourceMetadataOf,
  startAuthorization,
  workerFetch,
} from './oauth-client'

const STARTER = 'test-starter-token' // runs:write, runs:read
const READER = 'test-reader-token' // runs:read

/** Who /mcp takes a request with this Authorization to be (or its refusal). */
function callerOf(authorization?: string) {
  const headers: HeadersInit = authorization ? { authorization } : {}
  return servedCaller(new Request(MCP_URL, { method: 'POST', headers }), env as Env, '/mcp')
}

describe('discovery', () => {
  it('answers /mcp without a token with a 401 whose challenge names the resource metadata', async () => {
    const res = await workerFetch(MCP_URL, { method: 'POST' })
    expect(res.status).toBe(401)
    expect(res.headers.get('WWW-Authenticate')).toBe(
      `Bearer realm="OAuth", resource_metadata="${ORIGIN}/.well-known/oauth-protected-resource/mcp", scope="runs:read runs:write"`,
    )
    expect(await res.json()).toEqual({
      error: { code: 'unauthorized', message: expect.stringContaining(`${ORIGIN}/mcp`) },
    })
  })

  it('publishes the protected resource (RFC 9728) and the authorization server (RFC 8414)', async () => {
    const challenge = await workerFetch(MCP_URL, { method: 'POST' })
    const resource = await workerFetch(resourceMetadataOf(challenge))
    expect(resource.status).toBe(200)
    expect(await resource.json()).toEqual({
      resource: `${ORIGIN}/mcp`,
      authorization_servers: [ORIGIN],
      scopes_supported: ['runs:read', 'runs:write'],
      bearer_methods_supported: ['header'],
      resource_name: 'edgeloop /mcp',
    })
    const server = await workerFetch(`${ORIGIN}/.well-known/oauth-authorization-server`)
    expect(server.status).toBe(200)
    expect(await server.json()).toMatchObject({
      issuer: ORIGIN,
      authorization_endpoint: `${ORIGIN}/authorize`,
      token_endpoint: `${ORIGIN}/token`,
      registration_endpoint: `${ORIGIN}/register`,
      code_challenge_methods_supported: ['S256'],
      scopes_supported: [
        'runs:write',
        'runs:read',
        'approvals:write',
        'runs:delete',
        'service:read',
      ],
      protected_resources: [`${ORIGIN}/mcp`, `${ORIGIN}/a2a`],
    })
  })
})

describe('authorizing a client with an API token', () => {
  it('registers, shows the consent page, and issues a token that acts as the proved API token', async () => {
    const client = new MemoryClient()
    const url = await startAuthorization(client)
    expect(url.origin + url.pathname).toBe(`${ORIGIN}/authorize`)
    expect(url.searchParams.get('code_challenge_method')).toBe('S256')
    expect(url.searchParams.get('resource')).toBe(MCP_URL)
    expect(client.info?.client_id).toBeTruthy()

    const consent = await openConsent(url)
    // The client's self-chosen name is shown escaped, with where the tokens go.
    expect(consent.page).toContain('Test &#60;b&#62;MCP&#60;/b&#62; client')
    expect(consent.page).not.toContain('<b>MCP</b>')
    expect(consent.page).toContain('127.0.0.1')
    expect(consent.page).toMatch(/value="runs:read" checked/)

    const code = await codeOf(
      await answerConsent(url, consent, { token: STARTER, scopes: ['runs:read', 'runs:write'] }),
    )
    expect(
      await auth(client, { serverUrl: MCP_URL, authorizationCode: code, fetchFn: workerFetch }),
    ).toBe('AUTHORIZED')
    const access = client.saved!.access_token
    expect(client.saved).toMatchObject({ token_type: 'bearer', scope: 'runs:write runs:read' })

    expect(await callerOf(`Bearer ${access}`)).toMatchObject({
      caller: {
        kind: 'token',
        name: 'starter',
        scopes: ['runs:write', 'runs:read'],
        runs: 'all',
        client: client.info!.client_id,
      },
      auth: { audience: MCP_URL, clientId: client.info!.client_id, userId: 'starter' },
    })
    // Past authentication at /mcp itself: the request reaches the route, not the challenge.
    const res = await workerFetch(MCP_URL, {
      method: 'POST',
      headers: { authorization: `Bearer ${access}` },
    })
    expect(res.status).not.toBe(401)
  })

  it('grants only the scopes the person ticked, even fewer than the token holds', async () => {
    const client = await authorizeWith(STARTER, ['runs:read'])
    expect(client.saved!.scope).toBe('runs:read')
    const served = await callerOf(`Bearer ${client.saved!.access_token}`)
    expect(served.caller?.scopes).toEqual(['runs:read'])
    // An operation that needs more answers the step-up challenge naming what it needs.
    const refusal = scopeRefusal(served as Parameters<typeof scopeRefusal>[0], ['runs:write'])
    expect(refusal).toMatchObject({
      status: 403,
      code: 'insufficient_scope',
      message: 'token "starter" lacks the scope runs:write; authorize this client again with it',
    })
    expect(refusal.headers.get('WWW-Authenticate')).toBe(
      `Bearer realm="OAuth", error="insufficient_scope", scope="runs:write", resource_metadata="${ORIGIN}/.well-known/oauth-protected-resource/mcp"`,
    )
  })

  it('refreshes, and the refreshed token still acts as the same API token', async () => {
    const client = await authorizeWith(STARTER, ['runs:read', 'runs:write'])
    const first = client.saved!
    expect(first.refresh_token).toBeTruthy()
    // No access token: auth() refreshes with the refresh token it holds.
    client.saved = { ...first, access_token: '' }
    expect(await auth(client, { serverUrl: MCP_URL, fetchFn: workerFetch })).toBe('AUTHORIZED')
    expect(client.saved!.access_token).not.toBe(first.access_token)
    expect((await callerOf(`Bearer ${client.saved!.access_token}`)).caller?.name).toBe('starter')
  })

  it('revokes a token the client gives back (RFC 7009)', async () => {
    const client = await authorizeWith(STARTER, ['runs:read'])
    const access = client.saved!.access_token
    const res = await workerFetch(`${ORIGIN}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: access, client_id: client.info!.client_id }),
    })
    expect(res.status).toBe(200)
    expect((await callerOf(`Bearer ${access}`)).refusal).toMatchObject({
      status: 401,
      code: 'invalid_token',
    })
  })

  it('keeps plain API tokens working as bearer tokens on /mcp', async () => {
    const reader = await callerOf(`Bearer ${READER}`)
    expect(reader).toMatchObject({
      caller: { kind: 'token', name: 'reader', scopes: ['runs:read'], runs: 'all' },
    })
    // Its missing scope is its configuration's to change; the challenge still names the scope.
    const refusal = scopeRefusal(reader as Parameters<typeof scopeRefusal>[0], ['runs:write'])
    expect(refusal).toMatchObject({
      status: 403,
      code: 'forbidden',
      message:
        'token "reader" lacks the scope runs:write; add it in API_TOKENS or use another token',
    })
    expect(refusal.headers.get('WWW-Authenticate')).toBe(
      `Bearer realm="OAuth", error="insufficient_scope", scope="runs:write", resource_metadata="${ORIGIN}/.well-known/oauth-protected-resource/mcp"`,
    )
    expect(await callerOf('Bearer test-token')).toMatchObject({ caller: { name: 'api' } })
  })

  it('sends the client back with access_denied when the person declines', async () => {
    const client = new MemoryClient()
    const url = await startAuthorization(client)
    const res = await answerConsent(url, await openConsent(url), { decision: 'deny' })
    expect(res.status).toBe(302)
    const location = new URL(res.headers.get('Location')!)
    expect(location.searchParams.get('error')).toBe('access_denied')
    expect(location.searchParams.get('code')).toBeNull()
  })
})
