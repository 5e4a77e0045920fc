/**
 * How a person's grant finds the authorization server (docs/mcp.md#oauth), through the MCP
 * client's exports (`beginMcpAuthorization`, `finishMcpAuthorization`) against the fakes:
 * it begins as a client's first request does, with the server's `401` challenge — the
 * protected-resource metadata it names, wherever that is, and its scope; a 2025-03-26 server
 * (no protected-resource metadata) hosts its authorization server under its own origin; an
 * authorization server on this very machine may speak http; a Worker on http registers itself
 * rather than offer a client metadata URL nobody may fetch.
 */
import { env } from 'cloudflare:test'
import { describe, expect, it } from 'vitest'
import {
  beginMcpAuthorization,
  clientMetadataUrlOf,
  finishMcpAuthorization,
  McpOAuthProvider,
  type McpServerAuth,
  type McpServerConfig,
} from '../../src/mcp/index'
import { connectionStoreOf } from '../../src/runs/connections/connections'
import { FakeAuthServer, protectedMcp } from '../fakes/fake-oauth'
import { useServiceFakes } from '../service/harness'

const PUBLIC_URL = 'https://edgeloop.test'
const current = {} as { auth: FakeAuthServer; legacy: FakeAuthServer }

useServiceFakes({
  hosts: () => {
    const auth = new FakeAuthServer()
    // Its protected-resource metadata is at no well-known path: only its challenge names it.
    const hidden = protectedMcp(auth, 'hidden.test', { prmPath: '/meta/resource.json' })
    // 2025-03-26: no protected-resource metadata; the authorization server under /oauth.
    const legacy = new FakeAuthServer('https://legacy.test/oauth')
    const legacyMcp = protectedMcp(legacy, 'legacy.test', { prmPath: null })
    Object.assign(current, { auth, legacy })
    return {
      'auth.test': auth.handler,
      'hidden.test': hidden.handler,
      'legacy.test': (req: Request) => {
        const path = new URL(req.url).pathname
        const toAuth = path.startsWith('/oauth/') || path.startsWith('/.well-known/oauth-auth')
        return toAuth ? legacy.handler(req) : legacyMcp.handler(req)
      },
    }
  },
})

function server(name: string): McpServerConfig & { auth: McpServerAuth } {
  return {
    name,
    url: `https://${name}.test/mcp`,
    auth: { kind: 'oauth', owner: 'deployment' },
    timeoutMs: 2_000,
    overrides: {},
  }
}

/** A grant from start to end: begun, consented to by the fake, finished; the authorize URL. */
async function grant(target: McpServerConfig & { auth: McpServerAuth }, as: FakeAuthServer) {
  const records = (await connectionStoreOf(env))!
  const ctx = { records, owner: 'deployment', publicUrl: PUBLIC_URL }
  const begun = await beginMcpAuthorization(target, ctx, { state: 's1', scopes: null })
  const consent = await as.handler(new Request(begun.url))
  expect(consent.status, await consent.clone().text()).toBe(302)
  const code = new URL(consent.headers.get('location')!).searchParams.get('code')!
  await finishMcpAuthorization(target, ctx, {
    code,
    codeVerifier: begun.codeVerifier,
    grantor: 'token:approver',
    issuer: begun.issuer,
    ...(begun.resourceMetadataUrl ? { resourceMetadataUrl: begun.resourceMetadataUrl } : {}),
  })
  return { begun, connection: await records.connection(target.name, 'deployment') }
}

describe('a grant begins with the server’s challenge', () => {
  it('finds protected-resource metadata only the challenge names, and asks for its scope', async () => {
    const { begun, connection } = await grant(server('hidden'), current.auth)
    expect(begun.resourceMetadataUrl).toBe('https://hidden.test/meta/resource.json')
    expect(begun.url.origin).toBe('https://auth.test')
    // The challenge's scope, not the metadata's scopes_supported ("read write").
    expect(begun.url.searchParams.get('scope')).toBe('read')
    expect(begun.url.searchParams.get('resource')).toBe('https://hidden.test/mcp')
    expect(connection).toMatchObject({ grantor: 'token:approver', scopes: 'read' })
  })
})

describe('a 2025-03-26 server (no protected-resource metadata)', () => {
  it('is granted by the authorization server its own origin hosts, under its issuer’s path', async () => {
    const { begun, connection } = await grant(server('legacy'), current.legacy)
    expect(begun.url.href).toMatch(/^https:\/\/legacy\.test\/oauth\/authorize\?/)
    expect(begun.metadataIssuer).toBe('https://legacy.test/oauth')
    expect(current.legacy.tokenRequests).toEqual([
      expect.objectContaining({ grant_type: 'authorization_code' }),
    ])
    expect(connection).toMatchObject({ grantor: 'token:approver' })
  })
})

describe('where the authorization server may be', () => {
  const provider = (publicUrl = PUBLIC_URL) =>
    new McpOAuthProvider(
      server('any'),
      { records: {} as never, owner: 'deployment', publicUrl },
      { kind: 'use' },
    )
  const at = (issuer: string, endpointsAt = issuer, withResourceMetadata = true) => ({
    authorizationServerUrl: issuer,
    ...(withResourceMetadata
      ? { resourceMetadata: { resource: 'https://any.test/mcp', authorization_servers: [issuer] } }
      : {}),
    authorizationServerMetadata: {
      issuer,
      authorization_endpoint: `${endpointsAt}/authorize`,
      token_endpoint: `${endpointsAt}/token`,
      response_types_supported: ['code'],
    },
  })

  it.each([
    ['https on its own origin', 'https://auth.test'],
    ['http on this machine (localhost)', 'http://localhost:8788'],
    ['http on this machine (127.0.0.1)', 'http://127.0.0.1:8788'],
  ])('accepted: %s', (_, issuer) => {
    expect(() => provider().saveDiscoveryState(at(issuer))).not.toThrow()
  })

  it.each([
    ['http across a network', 'http://auth.test', 'http://auth.test', /over HTTPS/],
    ['endpoints on another origin', 'https://auth.test', 'https://evil.test', /evil\.test/],
  ])('refused: %s', (_, issuer, endpoints, message) => {
    expect(() => provider().saveDiscoveryState(at(issuer, endpoints))).toThrow(message)
  })

  it('a metadata issuer other than where it was found is a mix-up, unless no resource named it', () => {
    const found = at('https://mcp.test/oauth')
    const named = { ...found, authorizationServerUrl: 'https://mcp.test/' }
    expect(() => provider().saveDiscoveryState(named)).toThrow(/issuer mix-up/)
    const legacy = { ...named, resourceMetadata: undefined }
    expect(() => provider().saveDiscoveryState(legacy)).not.toThrow()
    const elsewhere = {
      ...legacy,
      authorizationServerMetadata: at('https://evil.test').authorizationServerMetadata,
    }
    expect(() => provider().saveDiscoveryState(elsewhere)).toThrow(/issuer mix-up/)
  })

  it('offers its client metadata URL only over https', () => {
    const own = 'https://edgeloop.test/oauth/client-metadata.json'
    expect(clientMetadataUrlOf({ PUBLIC_URL: PUBLIC_URL })).toBe(own)
    expect(clientMetadataUrlOf({ PUBLIC_URL: 'http://127.0.0.1:8787' })).toBeUndefined()
    // Published elsewhere: that URL, whatever PUBLIC_URL is.
    const elsewhere = 'https://id.example.com/edgeloop.json'
    expect(
      clientMetadataUrlOf({
        PUBLIC_URL: 'http://127.0.0.1:8787',
        MCP_CLIENT_METADATA_URL: elsewhere,
      }),
    ).toBe(elsewhere)
    const offered = new McpOAuthProvider(
      server('any'),
      { records: {} as never, owner: 'deployment', publicUrl: PUBLIC_URL, clientMetadataUrl: own },
      { kind: 'use' },
    )
    expect(offered.clientMetadataUrl).toBe(own)
    expect(provider().clientMetadataUrl).toBeUndefined()
  })
})
