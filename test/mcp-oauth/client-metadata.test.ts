/**
 * edgeloop's client ID metadata document (docs/mcp.md#oauth): when the authorization server
 * says it supports such documents, the document's URL is the client id, in the SDK's order (no
 * dynamic registration), and the authorization server fetches the document to learn the
 * redirect URI. It is PUBLIC_URL/oauth/client-metadata.json, or MCP_CLIENT_METADATA_URL for a
 * deployment whose document is published on another host (here a proxy in front of the
 * Worker's own route). Through the Worker's routes, as a browser follows them.
 */
import { describe, expect, it } from 'vitest'
import type { Env } from '../../src/env'
import { api } from '../service/harness'
import { fetchWith } from '../service/worker-with'
import { connectionList, grantWikiWith, useOAuthFakes } from './oauth-helpers'

const ELSEWHERE = 'https://id.edgeloop.test/clients/edgeloop.json'

const { fakes, oauth } = useOAuthFakes(() => ({
  // The Worker's own origin, where the default document is served; and another host that
  // publishes it (a proxy to the same route, as a deployment behind another host has).
  'edgeloop.test': (req) => api(new URL(req.url).pathname),
  'id.edgeloop.test': () =>
    fetchWith({ MCP_CLIENT_METADATA_URL: ELSEWHERE }, '/oauth/client-metadata.json'),
}))

type Settings = Partial<Record<keyof Env, string | undefined>>
const grant = (settings: Settings) => grantWikiWith(settings, oauth.auth)

describe('an authorization server that supports client ID metadata documents', () => {
  it.each([
    ['PUBLIC_URL’s route (the default)', {}, 'https://edgeloop.test/oauth/client-metadata.json'],
    ['MCP_CLIENT_METADATA_URL', { MCP_CLIENT_METADATA_URL: ELSEWHERE }, ELSEWHERE],
  ])('gets the document’s URL as client id: %s', async (_, settings: Settings, clientId) => {
    oauth.auth.options.clientIdMetadataDocuments = true
    const { authorize, callback } = await grant(settings)
    expect(authorize.searchParams.get('client_id')).toBe(clientId)
    expect(callback.status, await callback.clone().text()).toBe(200)
    // Not registered: the authorization server fetched the document, which names itself.
    expect(oauth.auth.registered.size).toBe(0)
    expect(oauth.auth.clientDocuments).toEqual([clientId])
    expect(oauth.auth.tokenRequests).toEqual([
      expect.objectContaining({ grant_type: 'authorization_code', client_id: clientId }),
    ])
    expect(await connectionList()).toEqual([
      expect.objectContaining({ server: 'wiki', grantor: 'token:approver' }),
    ])
    expect(fakes.outbound.to(new URL(clientId).host)).toHaveLength(1)
  })

  it('the served document names the URL it is published at, and the Worker’s callback', async () => {
    const doc = await fetchWith(
      { MCP_CLIENT_METADATA_URL: ELSEWHERE },
      '/oauth/client-metadata.json',
    )
    expect(await doc.json()).toMatchObject({
      client_id: ELSEWHERE,
      redirect_uris: ['https://edgeloop.test/oauth/callback'],
      token_endpoint_auth_method: 'none',
    })
  })
})

describe('an authorization server that does not support them', () => {
  it('gets a dynamic registration, whatever MCP_CLIENT_METADATA_URL says', async () => {
    const { authorize, callback } = await grant({ MCP_CLIENT_METADATA_URL: ELSEWHERE })
    expect(authorize.searchParams.get('client_id')).toBe('client-1')
    expect(callback.status).toBe(200)
    expect(oauth.auth.clientDocuments).toEqual([])
  })
})
