/**
 * MCP_TOKEN_KEY rotation, end to end (docs/mcp.md#where-tokens-live): a connection granted and
 * sealed under the old key serves runs once the old key is MCP_TOKEN_KEY_PREVIOUS and a new one
 * MCP_TOKEN_KEY (this project's settings), and what is written from then on is sealed with the
 * new key: the connection when it is read, the tokens a refresh brings. The grant is made through
 * the Worker's routes with the old key as its only key, as before the rotation.
 */
import { env } from 'cloudflare:test'
import { describe, expect, it } from 'vitest'
import { connectionStoreOf } from '../../src/runs/connections/connections'
import { toHex } from '../../src/security/hex'
import { reply } from '../fakes/fake-openai'
import { drainAlarms, getTrace, startRun } from '../service/harness'
import { fetchWith } from '../service/worker-with'
import { APPROVER, grantWikiWith, useOAuthFakes } from './oauth-helpers'

const settings = env as unknown as { MCP_TOKEN_KEY: string; MCP_TOKEN_KEY_PREVIOUS: string }
const OLD = settings.MCP_TOKEN_KEY_PREVIOUS
const NEW = settings.MCP_TOKEN_KEY
const BEFORE_ROTATION = { MCP_TOKEN_KEY: OLD, MCP_TOKEN_KEY_PREVIOUS: undefined }

const { fakes, oauth } = useOAuthFakes()

/** The id a sealed value carries for `key`: the first 8 hex of the key's SHA-256. */
async function keyId(key: string): Promise<string> {
  const raw = Uint8Array.from(atob(key), (c) => c.charCodeAt(0))
  return toHex(new Uint8Array(await crypto.subtle.digest('SHA-256', raw))).slice(0, 8)
}

/** The key id of each sealed row of `table`. */
async function sealedWith(table: 'mcp_connections' | 'mcp_oauth_clients'): Promise<string[]> {
  const { results } = await env.RUN_INDEX.prepare(`SELECT sealed FROM ${table}`).all<{
    sealed: string
  }>()
  return results.map((r) => r.sealed.split('.')[1]!)
}

/** The wiki connection granted through the routes, with the old key as the only key. */
async function grantBeforeRotation(): Promise<void> {
  const { callback } = await grantWikiWith(BEFORE_ROTATION, oauth.auth)
  expect(callback.status, await callback.clone().text()).toBe(200)
}

async function searchRun(): Promise<string> {
  fakes.ai.enqueue(
    reply.toolCalls([{ id: 'c1', name: 'wiki__search', arguments: { query: 'rollback' } }]),
    reply.text('Found.'),
  )
  const id = await startRun({ task: 'Search', tools: ['wiki__search'] })
  await drainAlarms(id)
  return (await getTrace(id)).steps[0]!.calls[0]!.observation
}

describe('rotating MCP_TOKEN_KEY', () => {
  it('keeps what the old key sealed, and seals what is written with the new key', async () => {
    expect(OLD).not.toBe(NEW)
    await grantBeforeRotation()
    const [oldId, newId] = [await keyId(OLD), await keyId(NEW)]
    expect(await sealedWith('mcp_connections')).toEqual([oldId])
    expect(await sealedWith('mcp_oauth_clients')).toEqual([oldId])
    const [granted] = [...oauth.auth.tokens.keys()]

    // Rotated: the run opens the old-key connection, and its token reaches the server.
    expect(await searchRun()).toBe('3 pages mention "rollback"')
    expect(oauth.wiki.calls).toHaveLength(1)
    expect(oauth.auth.tokenRequests.map((r) => r.grant_type)).toEqual(['authorization_code'])
    // Read once, the connection was sealed again with the new key: the new key alone opens it.
    expect(await sealedWith('mcp_connections')).toEqual([newId])
    const newOnly = await connectionStoreOf({ RUN_INDEX: env.RUN_INDEX, MCP_TOKEN_KEY: NEW })
    expect((await newOnly!.connection('wiki', 'deployment'))?.tokens.access_token).toBe(granted)
    const oldOnly = await connectionStoreOf({ RUN_INDEX: env.RUN_INDEX, MCP_TOKEN_KEY: OLD })
    expect(await oldOnly!.connection('wiki', 'deployment')).toBeNull()

    // A refresh needs the client registered under the old key (still opens) and writes the new
    // tokens with the new key.
    oauth.auth.expireAccessTokens()
    expect(await searchRun()).toBe('3 pages mention "rollback"')
    expect(oauth.auth.tokenRequests.map((r) => r.grant_type)).toEqual([
      'authorization_code',
      'refresh_token',
    ])
    expect(await sealedWith('mcp_connections')).toEqual([newId])
    const refreshed = await newOnly!.connection('wiki', 'deployment')
    expect(refreshed?.tokens.access_token).not.toBe(granted)
  })

  it('without the old key listed, what it sealed does not open; DELETE still forgets it', async () => {
    await grantBeforeRotation()
    const newOnly = { MCP_TOKEN_KEY: NEW, MCP_TOKEN_KEY_PREVIOUS: undefined }
    const res = await fetchWith(newOnly, '/v1/connections/wiki', {
      method: 'DELETE',
      headers: APPROVER,
    })
    // Nothing sealed in it can be read, so nothing is revoked; the row goes all the same.
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({ deleted: true, revoked: false })
    expect(oauth.auth.revocations).toEqual([])
    expect(await sealedWith('mcp_connections')).toEqual([])
  })
})
