/**
 * A server reached with the client-credentials grant (auth "client_credentials"): the SDK's
 * auth() discovers the authorization server from the 401's challenge, asks for a token with the
 * client's secret (Basic), for the server as `resource`, and the run's call goes through with it.
 * The token is stored sealed, listed without itself, and never shown.
 */
import { describe, expect, it } from 'vitest'
import { reply } from '../fakes/fake-openai'
import {
  api,
  drainAlarms,
  getRun,
  getTrace,
  hmacHex,
  startRun,
  WEBHOOK_SECRET,
} from '../service/harness'
import { connectionList, storedText, useOAuthFakes } from './oauth-helpers'

const { fakes, oauth } = useOAuthFakes()

describe('a client-credentials MCP server', () => {
  it('gets a token for its resource and serves the run; the token is sealed and never shown', async () => {
    fakes.ai.enqueue(
      reply.toolCalls([{ id: 'c1', name: 'm2m__search', arguments: { query: 'rollback' } }]),
      reply.toolCalls([{ id: 'c2', name: 'm2m__search', arguments: { query: 'again' } }]),
      reply.text('Found.'),
    )
    const id = await startRun({ task: 'Search', tools: ['m2m__search'] })
    await drainAlarms(id)
    const trace = await getTrace(id)
    expect(trace.ok).toBe(true)
    expect(trace.steps[0]!.calls[0]!.observation).toBe('3 pages mention "rollback"')
    expect(trace.steps[1]!.calls[0]!.observation).toBe('3 pages mention "again"')

    const [tokenRequest, ...more] = oauth.auth.tokenRequests
    expect(more).toEqual([]) // one token, reused by the later slice's session
    expect(tokenRequest).toMatchObject({
      grant_type: 'client_credentials',
      resource: 'https://m2m.test/mcp',
    })
    const [token] = [...oauth.auth.tokens.keys()]
    expect(oauth.m2m.authorizations).toContain(`Bearer ${token}`)

    expect(await connectionList()).toEqual([
      expect.objectContaining({
        server: 'm2m',
        owner: 'deployment',
        grantor: 'client_credentials',
      }),
    ])
    expect(await storedText()).not.toContain(token)
    const shown = JSON.stringify([await getRun(id), trace, fakes.ai.bodies, fakes.logs])
    expect(shown).not.toContain(token)
  })

  it('with a wrong secret: the run is told the server refused, not that it is unreachable', async () => {
    oauth.auth.secrets.set('edgeloop-m2m', 'another-secret-entirely-0000')
    fakes.ai.enqueue(
      reply.toolCalls([{ id: 'c1', name: 'm2m__search', arguments: { query: 'x' } }]),
      reply.text('No.'),
    )
    const id = await startRun({ task: 'Search', tools: ['m2m__search'] })
    await drainAlarms(id)
    const trace = await getTrace(id)
    expect(trace.steps[0]!.calls[0]!.observation).not.toContain('could not be reached')
    expect(trace.skippedTools).toEqual([
      { tool: 'm2m__*', reason: expect.stringContaining('invalid_client') },
    ])
    expect(await connectionList()).toEqual([])
  })
})

describe('a client-credentials server with a private-key JWT client', () => {
  it('proves the client with a signed assertion (ES256), not a secret', async () => {
    fakes.ai.enqueue(
      reply.toolCalls([{ id: 'c1', name: 'keyed__search', arguments: { query: 'keys' } }]),
      reply.text('Found.'),
    )
    const id = await startRun({ task: 'Search', tools: ['keyed__search'] })
    await drainAlarms(id)
    expect((await getTrace(id)).steps[0]!.calls[0]!.observation).toBe('3 pages mention "keys"')
    const [request] = oauth.auth.tokenRequests
    expect(request).toMatchObject({
      grant_type: 'client_credentials',
      client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
      resource: 'https://keyed.test/mcp',
    })
    expect(request).not.toHaveProperty('client_secret')
  })
})

describe('a webhook run', () => {
  async function webhookStart(tools: string[]): Promise<Response> {
    const body = JSON.stringify({ task: 'Search', tools })
    const ts = Math.floor(Date.now() / 1000)
    return api('/v1/runs', {
      method: 'POST',
      body,
      headers: {
        'content-type': 'application/json',
        'X-Edgeloop-Timestamp': String(ts),
        'X-Edgeloop-Signature': `v1=${await hmacHex(WEBHOOK_SECRET, `${ts}.${body}`)}`,
      },
    })
  }

  it('that may use a per-person server is refused at start: nobody could grant it', async () => {
    const res = await webhookStart(['tracker__search', 'm2m__search'])
    expect(res.status).toBe(400)
    expect(await res.json()).toMatchObject({
      error: { code: 'needs_person', details: { servers: ['tracker'] } },
    })
  })

  it('uses the deployment’s connections', async () => {
    fakes.ai.enqueue(
      reply.toolCalls([{ id: 'c1', name: 'm2m__search', arguments: { query: 'x' } }]),
      reply.text('Done.'),
    )
    const res = await webhookStart(['m2m__search'])
    expect(res.status).toBe(202)
    const { id } = (await res.json()) as { id: string }
    await drainAlarms(id)
    expect((await getTrace(id)).steps[0]!.calls[0]!.observation).toBe('3 pages mention "x"')
  })
})
