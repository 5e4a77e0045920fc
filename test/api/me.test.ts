/**
 * `GET /v1/me` through the Worker's fetch: any valid bearer token learns its name and scopes
 * (what the console offers follows them); no token, a bad one or a webhook signature does not.
 */
import { describe, expect, it } from 'vitest'
import * as z from 'zod/mini'
import { ROUTE_ERRORS } from '../../src/routes/openapi/openapi-errors'
import { Me } from '../../src/api/response-schemas'
import { api, AUTH, hmacHex, useServiceFakes, WEBHOOK_SECRET } from '../service/harness'
import { fetchWith } from '../service/worker-with'

useServiceFakes()

const bearer = (token: string) => ({ authorization: `Bearer ${token}` })
const ME_401 = ROUTE_ERRORS.whoAmI[401]

async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text))
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('')
}

async function errorOf(res: Response) {
  return ((await res.json()) as { error: { code: string; message: string } }).error
}

describe('GET /v1/me', () => {
  // The tokens of vitest.config.ts: the legacy API_TOKEN (`api`, every scope) and three named ones.
  it.each([
    [
      'test-token',
      'api',
      ['runs:write', 'runs:read', 'approvals:write', 'runs:delete', 'service:read'],
    ],
    ['test-reader-token', 'reader', ['runs:read']],
    ['test-starter-token', 'starter', ['runs:write', 'runs:read']],
    ['test-approver-token', 'approver', ['runs:read', 'approvals:write']],
  ])('names the token %s: %s with %j', async (token, name, scopes) => {
    const res = await api('/v1/me', { headers: bearer(token) })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toMatch(/^application\/json/)
    const body = await res.json()
    expect(body).toEqual({ name, scopes, runs: 'all' })
    expect(z.safeParse(Me, body).success).toBe(true)
  })

  it('answers a token that holds no runs:read, in the documented scope order', async () => {
    const tokens = JSON.stringify([
      {
        name: 'deployer',
        sha256: await sha256Hex('deployer-token'),
        scopes: ['approvals:write', 'runs:write'],
      },
    ])
    const res = await fetchWith({ API_TOKENS: tokens }, '/v1/me', {
      headers: bearer('deployer-token'),
    })
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({
      name: 'deployer',
      scopes: ['runs:write', 'approvals:write'],
      runs: 'all',
    })
    // The same token is still refused where a scope is needed: /v1/me grants nothing.
    const list = await fetchWith({ API_TOKENS: tokens }, '/v1/runs', {
      headers: bearer('deployer-token'),
    })
    expect(list.status).toBe(403)
  })

  it.each([
    ['no Authorization', {}, 'unauthorized', /send Authorization: Bearer <token>/],
    ['a bad token', bearer('not-a-token'), 'unauthorized', /invalid API token/],
    ['not a Bearer header', { authorization: 'Basic dGVzdA==' }, 'unauthorized', /Bearer/],
  ])('answers %s with 401 and the JSON error body', async (_what, headers, code, message) => {
    const res = await api('/v1/me', { headers })
    expect(res.status).toBe(401)
    const error = await errorOf(res)
    expect(error.code).toBe(code)
    expect(error.message).toMatch(message)
    expect(ME_401).toContain(code)
  })

  it('answers 401 auth_not_configured when the server has no tokens', async () => {
    const res = await fetchWith({ API_TOKEN: undefined, API_TOKENS: undefined }, '/v1/me', {
      headers: AUTH,
    })
    expect(res.status).toBe(401)
    expect((await errorOf(res)).code).toBe('auth_not_configured')
  })

  it('refuses a webhook signature with 403: it is not a token', async () => {
    const ts = Math.floor(Date.now() / 1000)
    const res = await api('/v1/me', {
      headers: {
        'X-Edgeloop-Timestamp': String(ts),
        'X-Edgeloop-Signature': `v1=${await hmacHex(WEBHOOK_SECRET, `${ts}.`)}`,
      },
    })
    expect(res.status).toBe(403)
    const error = await errorOf(res)
    expect(error.code).toBe('forbidden')
    expect(error.message).toMatch(/webhook signature is not a token.*Authorization: Bearer/)
    expect(ROUTE_ERRORS.whoAmI[403]).toContain('forbidden')

    const forged = await api('/v1/me', {
      headers: {
        'X-Edgeloop-Timestamp': String(ts),
        'X-Edgeloop-Signature': `v1=${'0'.repeat(64)}`,
      },
    })
    expect(forged.status).toBe(401)
    expect((await errorOf(forged)).code).toBe('invalid_signature')
  })

  it.each(['POST', 'PUT', 'DELETE', 'PATCH'])(
    'answers %s with 405 and Allow, with or without a token',
    async (method) => {
      for (const headers of [AUTH, {}]) {
        const res = await api('/v1/me', { method, headers })
        expect(res.status).toBe(405)
        expect(res.headers.get('allow')).toBe('GET, HEAD')
        expect(await errorOf(res)).toMatchObject({ code: 'method_not_allowed' })
      }
    },
  )

  it('answers HEAD like GET, without a body, and a trailing slash with 404', async () => {
    const head = await api('/v1/me', { method: 'HEAD', headers: bearer('test-reader-token') })
    expect(head.status).toBe(200)
    expect(await head.text()).toBe('')
    expect((await api('/v1/me', { method: 'HEAD' })).status).toBe(401)
    expect((await api('/v1/me/', { headers: AUTH })).status).toBe(404)
  })
})
