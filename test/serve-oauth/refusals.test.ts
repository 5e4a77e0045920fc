/**
 * What the authorization server and /mcp refuse, each with a clear JSON error and nothing
 * granted: a wrong, replayed or PKCE-mismatched code, scopes beyond the proving token's, a wrong
 * token on the consent page, an unknown client, a revoked or rotated API token behind a grant.
 */
import { env } from 'cloudflare:workers'
import { auth } from '@modelcontextprotocol/sdk/client/auth.js'
import { describe, expect, it } from 'vitest'
import type { Env } from '../../src/env'
import { servedCaller } from '../../src/serve/oauth'
import { captureLogs, logLines, ORIGIN, restoreLogLevel } from '../service/harness'
import { fetchWith } from '../service/worker-with'
import {
  answerConsent,
  authorizeWith,
  codeOf,
  MCP_URL,
  MemoryClient,
  openConsent,
  REDIRECT,
  startAuthorization,
  workerFetch,
} from './oauth-client'

const STARTER = 'test-starter-token'
const READER = 'test-reader-token'

function callerOf(authorization: string, settings: Partial<Env> = {}) {
  return servedCaller(
    new Request(MCP_URL, { method: 'POST', headers: { authorization } }),
    { ...(env as Env), ...settings },
    '/mcp',
  )
}

/** API_TOKENS as configured, with `starter` removed or its hash replaced. */
function tokensWithStarter(change: 'revoked' | 'rotated'): string {
  const tokens = JSON.parse((env as Env).API_TOKENS!) as { name: string; sha256: string }[]
  return JSON.stringify(
    change === 'revoked'
      ? tokens.filter((t) => t.name !== 'starter')
      : tokens.map((t) => (t.name === 'starter' ? { ...t, sha256: 'a'.repeat(64) } : t)),
  )
}

/** A client holding a code for `starter`, not yet exchanged. */
async function clientWithCode() {
  const client = new MemoryClient()
  const url = await startAuthorization(client)
  const code = await codeOf(
    await answerConsent(url, await openConsent(url), { token: STARTER, scopes: ['runs:read'] }),
  )
  return { client, code }
}

function exchange(client: MemoryClient, code: string, verifier = client.verifier) {
  return workerFetch(`${ORIGIN}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      redirect_uri: REDIRECT,
      client_id: client.info!.client_id,
      resource: MCP_URL,
    }),
  })
}

async function oauthError(res: Response, status: number, error: string) {
  const body = (await res.json()) as Record<string, unknown>
  expect(res.status, JSON.stringify(body)).toBe(status)
  expect(body).toMatchObject({ error, error_description: expect.any(String) })
  expect(body.access_token).toBeUndefined()
}

describe('the code exchange', () => {
  it('refuses a code it never issued', async () => {
    const { client } = await clientWithCode()
    await oauthError(await exchange(client, 'starter:nogrant:nosecret'), 400, 'invalid_grant')
    await expect(
      auth(client, { serverUrl: MCP_URL, authorizationCode: 'bogus', fetchFn: workerFetch }),
    ).rejects.toThrow()
    expect(client.saved).toBeUndefined()
  })

  it('refuses a PKCE verifier that does not match the challenge, and then the right one works', async () => {
    const { client, code } = await clientWithCode()
    const wrong = await exchange(client, code, 'x'.repeat(64))
    await oauthError(wrong, 400, 'invalid_grant')
    const right = await exchange(client, code)
    expect(right.status).toBe(200)
  })

  it('refuses a code used twice, and revokes what the first use issued', async () => {
    const { client, code } = await clientWithCode()
    const first = (await (await exchange(client, code)).json()) as { access_token: string }
    expect((await callerOf(`Bearer ${first.access_token}`)).caller?.name).toBe('starter')
    await oauthError(await exchange(client, code), 400, 'invalid_grant')
    const after = await callerOf(`Bearer ${first.access_token}`)
    expect(after.refusal?.status).toBe(401)
  })
})

describe('the consent page', () => {
  it('refuses scopes beyond the proving token, grants nothing, and lets the person correct it', async () => {
    const client = new MemoryClient()
    const url = await startAuthorization(client)
    const consent = await openConsent(url)
    const res = await answerConsent(url, consent, {
      token: READER,
      scopes: ['runs:read', 'runs:write'],
    })
    expect(res.status).toBe(403)
    expect(res.headers.get('Location')).toBeNull()
    expect(await res.json()).toEqual({
      error: {
        code: 'invalid_scope',
        message: expect.stringContaining('token "reader" does not hold runs:write'),
        details: { beyond: ['runs:write'], scopes: ['runs:read'] },
      },
    })
    // The same page, corrected: the handle was not used up.
    const code = await codeOf(
      await answerConsent(url, consent, { token: READER, scopes: ['runs:read'] }),
    )
    expect(code).toMatch(/^reader:/)
  })

  it.each([
    ['a wrong token', { token: 'not-a-token', scopes: ['runs:read'] }, 401, 'invalid_token'],
    ['no token', { scopes: ['runs:read'] }, 401, 'invalid_token'],
    ['no scope', { token: STARTER, scopes: [] }, 400, 'invalid_scope'],
    ['an unknown scope', { token: STARTER, scopes: ['admin'] }, 400, 'invalid_scope'],
  ])('refuses %s with a JSON error and no redirect', async (_, fields, status, code) => {
    const url = await startAuthorization(new MemoryClient())
    const res = await answerConsent(url, await openConsent(url), fields)
    expect(res.status).toBe(status)
    expect(res.headers.get('Location')).toBeNull()
    expect(await res.json()).toMatchObject({ error: { code } })
  })

  it('refuses a form without the browser cookie that binds its handle', async () => {
    const url = await startAuthorization(new MemoryClient())
    const consent = await openConsent(url)
    const res = await answerConsent(
      url,
      { ...consent, cookie: '' },
      {
        token: STARTER,
        scopes: ['runs:read'],
      },
    )
    expect(res.status).toBe(400)
    expect(res.headers.get('Location')).toBeNull()
    expect(await res.json()).toMatchObject({ error: { code: 'invalid_request' } })
  })

  it('refuses an unknown client, or a redirect URI the client did not register, without redirecting', async () => {
    const client = new MemoryClient()
    const registered = await startAuthorization(client)
    const elsewhere = new URL(registered)
    elsewhere.searchParams.set('redirect_uri', 'https://attacker.test/callback')
    const unknown = new URL(registered)
    unknown.searchParams.set('client_id', 'no-such-client')
    for (const url of [elsewhere, unknown]) {
      const res = await workerFetch(url, { redirect: 'manual' })
      expect(res.status).toBe(400)
      expect(res.headers.get('Location')).toBeNull()
      expect(await res.json()).toMatchObject({ error: { code: 'invalid_request' } })
    }
  })
})

describe('the token endpoint', () => {
  it('refuses an unknown client', async () => {
    const res = await workerFetch(`${ORIGIN}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: 'a:b:c',
        code_verifier: 'v'.repeat(64),
        client_id: 'no-such-client',
      }),
    })
    await oauthError(res, 401, 'invalid_client')
  })
})

describe('a revoked API token', () => {
  it.each(['revoked', 'rotated'] as const)(
    'stops the access tokens granted with it when it is %s',
    async (change) => {
      const client = await authorizeWith(STARTER, ['runs:read', 'runs:write'])
      const access = `Bearer ${client.saved!.access_token}`
      const refused = await callerOf(access, { API_TOKENS: tokensWithStarter(change) })
      expect(refused.refusal).toMatchObject({
        status: 401,
        code: 'invalid_token',
        message: expect.stringContaining('revoked or replaced'),
      })
      expect(refused.refusal?.headers.get('WWW-Authenticate')).toContain('error="invalid_token"')
      // Through the Worker as well.
      const res = await fetchWith({ API_TOKENS: tokensWithStarter(change) }, '/mcp', {
        method: 'POST',
        headers: { authorization: access },
      })
      expect(res.status).toBe(401)
      expect(await res.json()).toEqual({
        error: { code: 'invalid_token', message: expect.stringContaining('revoked or replaced') },
      })
    },
  )

  it('ends the grant at the next refresh, for good', async () => {
    const logs = captureLogs()
    const client = await authorizeWith(STARTER, ['runs:read']).finally(() => {
      restoreLogLevel()
      logs.mockRestore()
    })
    expect(logLines(logs)).toContainEqual(
      expect.objectContaining({
        msg: 'oauth_authorized',
        token: 'starter',
        client: client.info!.client_id,
        scopes: ['runs:read'],
      }),
    )
    const refresh = () => ({
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: client.saved!.refresh_token!,
        client_id: client.info!.client_id,
      }),
    })
    const res = await fetchWith({ API_TOKENS: tokensWithStarter('revoked') }, '/token', refresh())
    await oauthError(res, 400, 'invalid_grant')
    // The token coming back does not revive the grant.
    await oauthError(await workerFetch(`${ORIGIN}/token`, refresh()), 400, 'invalid_grant')
    expect((await callerOf(`Bearer ${client.saved!.access_token}`)).refusal?.status).toBe(401)
  })

  it('narrows a grant to the scopes the token still holds', async () => {
    const client = await authorizeWith(STARTER, ['runs:read', 'runs:write'])
    const tokens = JSON.parse((env as Env).API_TOKENS!) as { name: string; scopes: string[] }[]
    const narrowed = JSON.stringify(
      tokens.map((t) => (t.name === 'starter' ? { ...t, scopes: ['runs:read'] } : t)),
    )
    const served = await callerOf(`Bearer ${client.saved!.access_token}`, { API_TOKENS: narrowed })
    expect(served.caller?.scopes).toEqual(['runs:read'])
  })
})

describe('/mcp without a valid token', () => {
  it('answers an unknown bearer token with the invalid_token challenge', async () => {
    const res = await workerFetch(MCP_URL, {
      method: 'POST',
      headers: { authorization: 'Bearer starter:nogrant:nosecret' },
    })
    expect(res.status).toBe(401)
    expect(res.headers.get('WWW-Authenticate')).toContain('error="invalid_token"')
    expect(res.headers.get('WWW-Authenticate')).toContain('resource_metadata=')
    expect(await res.json()).toMatchObject({ error: { code: 'invalid_token' } })
  })
})

describe('without PUBLIC_URL', () => {
  it('has no authorization server, and /mcp takes API tokens only', async () => {
    const off = { PUBLIC_URL: undefined }
    for (const path of ['/.well-known/oauth-authorization-server', '/authorize']) {
      const res = await fetchWith(off, path)
      expect(res.status).toBe(404)
      expect(await res.json()).toMatchObject({ error: { code: 'oauth_not_configured' } })
    }
    const challenge = await fetchWith(off, '/mcp', { method: 'POST' })
    expect(challenge.status).toBe(401)
    expect(challenge.headers.get('WWW-Authenticate')).toBe('Bearer realm="edgeloop"')
    const served = await callerOf(`Bearer ${READER}`, off)
    expect(served.caller?.name).toBe('reader')
  })
})
