/**
 * A person's grant, through the Worker's routes as a browser follows them: a single-use connect
 * link, the authorization server (DCR, PKCE S256, `resource`, scopes from the server's challenge),
 * the callback (state single use, bound to the browser, `iss` checked), then runs use the
 * connection; refresh, revocation, and the ways a callback is refused with nothing stored.
 */
import { describe, expect, it } from 'vitest'
import { reply } from '../fakes/fake-openai'
import { api, drainAlarms, getTrace as getTraceAsApi, startRun } from '../service/harness'
import {
  ALPHA,
  APPROVER,
  callback,
  connectionList,
  connectLink,
  followLink,
  storedText,
  useOAuthFakes,
} from './oauth-helpers'

const { fakes, oauth } = useOAuthFakes()

const search = (id: string, name: string) =>
  reply.toolCalls([{ id, name, arguments: { query: 'rollback' } }])

/** The deployment's wiki connection, granted by the approver through the routes. */
async function grantWiki(): Promise<void> {
  const browser = await followLink(await connectLink('wiki', APPROVER), oauth.auth)
  const res = await callback(browser.callback, browser.cookie)
  expect(res.status, await res.clone().text()).toBe(200)
}

describe('a connect link', () => {
  it('sends the browser to the authorization server with PKCE S256, resource, scopes and state', async () => {
    const link = await connectLink('wiki', APPROVER)
    expect(link).toMatch(/^https:\/\/edgeloop\.test\/oauth\/connect\/[0-9a-f]{64}$/)
    const browser = await followLink(link, oauth.auth)
    const q = browser.authorize.searchParams
    expect(browser.authorize.origin + browser.authorize.pathname).toBe(
      'https://auth.test/authorize',
    )
    expect(q.get('code_challenge_method')).toBe('S256')
    expect(q.get('resource')).toBe('https://wiki.test/mcp')
    expect(q.get('scope')).toBe('read') // the server's 401 challenge names it (before scopes_supported)
    expect(q.get('redirect_uri')).toBe('https://edgeloop.test/oauth/callback')
    expect(q.get('client_id')).toBe('client-1') // registered dynamically (RFC 7591)
    expect(browser.cookie).toMatch(/^__Host-edgeloop_connect_[0-9a-f]{16}=[0-9a-f]{64}$/)

    const again = await api(new URL(link).pathname, { redirect: 'manual' })
    expect(again.status).toBe(409)
    expect(await again.json()).toMatchObject({ error: { code: 'already_used' } })
  })

  it('completes on the callback; the grant serves runs, with the grantor listed and no token shown', async () => {
    await grantWiki()
    const [token] = [...oauth.auth.tokens.keys()]
    expect(await connectionList()).toEqual([
      expect.objectContaining({
        server: 'wiki',
        owner: 'deployment',
        grantor: 'token:approver',
        scopes: 'read',
      }),
    ])
    fakes.ai.enqueue(search('c1', 'wiki__search'), reply.text('Found.'))
    const id = await startRun({ task: 'Search', tools: ['wiki__search'] })
    await drainAlarms(id)
    const trace = await getTrace(id)
    expect(trace.steps[0]!.calls[0]!.observation).toBe('3 pages mention "rollback"')
    expect(oauth.wiki.authorizations.at(-1)).toBe(`Bearer ${token}`)
    expect(await storedText()).not.toContain(token)
    expect(JSON.stringify([trace, fakes.ai.bodies, fakes.logs])).not.toContain(token)
  })

  it('the list names the servers that use OAuth and whose connection each is', async () => {
    const res = await api('/v1/connections', { headers: APPROVER })
    expect(await res.json()).toEqual({
      servers: [
        { name: 'tracker', auth: 'oauth', owner: 'person' },
        { name: 'wiki', auth: 'oauth', owner: 'deployment' },
        { name: 'm2m', auth: 'client_credentials', owner: 'deployment' },
        { name: 'keyed', auth: 'client_credentials', owner: 'deployment' },
      ],
      connections: [],
    })
  })

  it('needs approvals:write for the deployment’s connection', async () => {
    const res = await api('/v1/connections/wiki/link', {
      method: 'POST',
      headers: { authorization: 'Bearer test-starter-token' },
    })
    expect(res.status).toBe(403)
  })
})

describe('a callback that is refused stores nothing', () => {
  it('replayed state: 409, and the first grant stands alone', async () => {
    const browser = await followLink(await connectLink('wiki', APPROVER), oauth.auth)
    expect((await callback(browser.callback, browser.cookie)).status).toBe(200)
    const before = await storedText()
    const replay = await callback(browser.callback, browser.cookie)
    expect(replay.status).toBe(409)
    expect(await replay.json()).toMatchObject({ error: { code: 'already_used' } })
    expect(oauth.auth.tokenRequests).toHaveLength(1)
    expect(await storedText()).toBe(before)
  })

  it.each([
    [
      'someone else’s state (another browser): 403',
      (url: URL) => [url, undefined],
      403,
      'state_mismatch',
    ],
    [
      'a made-up state: 404',
      (url: URL) => [withParam(url, 'state', 'f'.repeat(64)), 'x'],
      404,
      'unknown_state',
    ],
    [
      'an issuer that differs (mix-up): 400',
      (url: URL) => [withParam(url, 'iss', 'https://evil.test'), null],
      400,
      'issuer_mismatch',
    ],
  ] as const)('%s', async (_name, tamper, status, code) => {
    const browser = await followLink(await connectLink('wiki', APPROVER), oauth.auth)
    const [url, cookie] = tamper(browser.callback) as [URL, string | undefined | null]
    const res = await callback(url, cookie === null ? browser.cookie : cookie)
    expect(res.status).toBe(status)
    expect(await res.json()).toMatchObject({ error: { code } })
    expect(oauth.auth.tokenRequests).toEqual([])
    expect(await connectionList()).toEqual([])
  })

  it('an authorization server whose metadata names another issuer: the link answers 502', async () => {
    oauth.auth.options = { metadataIssuer: 'https://evil.test' }
    const res = await api(new URL(await connectLink('wiki', APPROVER)).pathname)
    expect(res.status).toBe(502)
    expect(((await res.json()) as { error: { message: string } }).error.message).toContain(
      'issuer mix-up',
    )
    expect(oauth.auth.registered.size).toBe(0)
  })

  it.each([
    ['its token endpoint on another origin', { tokenEndpointElsewhere: true }, 'not on its issuer'],
    ['megabytes of metadata', { metadataBytes: 3_000_000 }, 'more than 262144 bytes'],
    ['a redirect loop', { redirectLoop: true }, 'answered a redirect'],
  ])('%s: a clear 502, nothing registered', async (_name, options, says) => {
    oauth.auth.options = options
    const res = await api(new URL(await connectLink('wiki', APPROVER)).pathname)
    expect(res.status).toBe(502)
    expect(((await res.json()) as { error: { message: string } }).error.message).toContain(says)
    expect(oauth.auth.registered.size).toBe(0)
  })
})

describe('a granted connection', () => {
  it('is refreshed when its access token expires', async () => {
    await grantWiki()
    oauth.auth.expireAccessTokens()
    fakes.ai.enqueue(search('c1', 'wiki__search'), reply.text('Found.'))
    const id = await startRun({ task: 'Search', tools: ['wiki__search'] })
    await drainAlarms(id)
    expect((await getTrace(id)).steps[0]!.calls[0]!.observation).toBe('3 pages mention "rollback"')
    expect(oauth.auth.tokenRequests.map((r) => r.grant_type)).toEqual([
      'authorization_code',
      'refresh_token',
    ])
    expect(oauth.auth.tokenRequests[1]).toMatchObject({ resource: 'https://wiki.test/mcp' })
  })

  it('whose refresh is refused is deleted, and runs are told it needs a connection', async () => {
    await grantWiki()
    oauth.auth.expireAccessTokens()
    oauth.auth.revokeRefreshTokens()
    fakes.ai.enqueue(search('c1', 'wiki__search'), reply.text('No.'))
    const id = await startRun({ task: 'Search', tools: ['wiki__search'] })
    await drainAlarms(id)
    const trace = await getTrace(id)
    expect(trace.skippedTools).toEqual([
      {
        tool: 'wiki__*',
        reason: expect.stringContaining(
          'needs a connection (the granted one could not be refreshed)',
        ),
      },
    ])
    expect(await connectionList()).toEqual([])
  })

  it('DELETE revokes its tokens at the authorization server and forgets it', async () => {
    await grantWiki()
    const [access] = [...oauth.auth.tokens.keys()]
    const res = await api('/v1/connections/wiki', { method: 'DELETE', headers: APPROVER })
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({ deleted: true, revoked: true, owner: 'deployment' })
    expect(oauth.auth.revocations).toHaveLength(2)
    expect(oauth.auth.revocations).toContain(access)
    expect(await connectionList()).toEqual([])
    expect(
      (await api('/v1/connections/wiki', { method: 'DELETE', headers: APPROVER })).status,
    ).toBe(404)
  })
})

describe('a server that asks for more scope (403 insufficient_scope)', () => {
  it('is "forbidden: needs scope X"; a grant with that scope serves the next run', async () => {
    await grantWiki()
    oauth.wikiAccess.scope = 'admin'
    // (A call of its stand-in would wait on a connect item: connect-item.test.ts.)
    fakes.ai.enqueue(reply.text('No.'))
    const first = await startRun({ task: 'Search', tools: ['wiki__search'] })
    await drainAlarms(first)
    expect((await getTrace(first)).skippedTools).toEqual([
      { tool: 'wiki__*', reason: expect.stringContaining('forbidden: needs scope admin') },
    ])
    // The grant asked for with that scope (as a connect item would ask), then a run that works.
    const browser = await followLink(
      await connectLink('wiki', APPROVER, { scopes: 'read admin' }),
      oauth.auth,
    )
    expect(browser.authorize.searchParams.get('scope')).toBe('read admin')
    expect((await callback(browser.callback, browser.cookie)).status).toBe(200)
    expect(await connectionList()).toEqual([expect.objectContaining({ scopes: 'read admin' })])
    fakes.ai.enqueue(search('c1', 'wiki__search'), reply.text('Found.'))
    const second = await startRun({ task: 'Search', tools: ['wiki__search'] })
    await drainAlarms(second)
    expect((await getTrace(second)).steps[0]!.calls[0]!.observation).toBe(
      '3 pages mention "rollback"',
    )
  })
})

describe('a per-person server', () => {
  it('uses the connection of the token that started the run, not another person’s', async () => {
    const browser = await followLink(await connectLink('tracker', ALPHA), oauth.auth)
    expect((await callback(browser.callback, browser.cookie)).status).toBe(200)
    expect(await connectionList()).toEqual([
      expect.objectContaining({ server: 'tracker', owner: 'token:alpha', grantor: 'token:alpha' }),
    ])
    // Alpha's run uses alpha's grant; the approver's run has none and is told so.
    fakes.ai.enqueue(search('c1', 'tracker__search'), reply.text('Found.'))
    const mine = await startRunAs(ALPHA, { task: 'Search', tools: ['tracker__search'] })
    await drainAlarms(mine)
    expect((await getTrace(mine, ALPHA)).steps[0]!.calls[0]!.observation).toBe(
      '3 pages mention "rollback"',
    )
    fakes.ai.enqueue(search('c1', 'tracker__search'), reply.text('No.'))
    const theirs = await startRun({ task: 'Search', tools: ['tracker__search'] })
    await drainAlarms(theirs)
    expect((await getTrace(theirs)).skippedTools).toEqual([
      {
        tool: 'tracker__*',
        reason: expect.stringContaining('the tracker MCP server needs a connection'),
      },
    ])
  })
})

function withParam(url: URL, name: string, value: string): URL {
  const out = new URL(url)
  out.searchParams.set(name, value)
  return out
}

async function startRunAs(headers: Record<string, string>, body: Record<string, unknown>) {
  const res = await api('/v1/runs', {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  const json = (await res.json()) as { id: string }
  expect(res.status, JSON.stringify(json)).toBe(202)
  return json.id
}

async function getTrace(id: string, headers?: Record<string, string>) {
  if (!headers) return getTraceAsApi(id)
  const res = await api(`/v1/runs/${id}/trace`, { headers })
  expect(res.status).toBe(200)
  return (await res.json()) as Awaited<ReturnType<typeof getTraceAsApi>>
}
