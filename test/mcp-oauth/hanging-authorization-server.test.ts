/**
 * An authorization server whose token endpoint takes requests and never answers
 * (docs/mcp.md#where-tokens-live: OAuth requests answer within the server's timeout_ms, 2 s
 * here), or breaks the connection. Neither a person's grant nor a run waits past that: the
 * callback is a clear 502, a run's refresh makes the server's tools say why, and nothing is
 * stored either way; a grant that could not be refreshed for want of an answer is kept, never
 * taken for one that is missing.
 */
import { env } from 'cloudflare:test'
import { describe, expect, it } from 'vitest'
import { connectionStoreOf } from '../../src/runs/connections/connections'
import { reply } from '../fakes/fake-openai'
import { drainAlarms, getTrace, startRun } from '../service/harness'
import {
  APPROVER,
  callback,
  connectionList,
  connectLink,
  followLink,
  grantConnection,
  useOAuthFakes,
} from './oauth-helpers'

const { fakes, oauth } = useOAuthFakes()

const NO_ANSWER = 'https://auth.test/token: no answer within 2000ms'

async function storedWiki() {
  return (await connectionStoreOf(env))!.connection('wiki', 'deployment')
}

describe('a token endpoint that never answers', () => {
  it('the callback answers 502 within the timeout, naming it, and stores nothing', async () => {
    const browser = await followLink(await connectLink('wiki', APPROVER), oauth.auth)
    oauth.auth.options.tokenEndpoint = 'hang'
    const res = await callback(browser.callback, browser.cookie)
    expect(res.status).toBe(502)
    expect(await res.json()).toEqual({
      error: {
        code: 'authorization_server_failed',
        message: expect.stringContaining(NO_ANSWER),
      },
    })
    expect(await connectionList()).toEqual([])
    expect(await storedWiki()).toBeNull()
  })

  it('a run whose refresh gets no answer goes on without the server, told why; the grant is kept', async () => {
    await grantConnection('wiki', oauth.auth, APPROVER)
    const granted = await storedWiki()
    oauth.auth.expireAccessTokens()
    oauth.auth.options.tokenEndpoint = 'hang'
    fakes.ai.enqueue(
      reply.toolCalls([{ id: 'c1', name: 'wiki__search', arguments: { query: 'rollback' } }]),
      reply.text('The wiki did not answer.'),
    )
    const id = await startRun({ task: 'Search', tools: ['wiki__search'] })
    await drainAlarms(id)
    const trace = await getTrace(id)
    expect(trace).toMatchObject({ ok: true, answer: 'The wiki did not answer.' })
    // The tool list's own wait (the same 2 s) ends first, while the refresh still waits.
    const why = 'no answer from https://wiki.test/mcp within 2000ms'
    expect(trace.skippedTools).toEqual([{ tool: 'wiki__*', reason: expect.stringContaining(why) }])
    const observation = trace.steps[0]!.calls[0]!.observation
    expect(observation).toMatch(/^\[ToolError\]/)
    expect(observation).toContain(why)
    expect(oauth.wiki.calls).toEqual([])
    // Nothing new stored: the same tokens as granted, for a later refresh to try again.
    expect(await storedWiki()).toEqual(granted)
    expect(oauth.auth.tokenRequests.map((r) => r.grant_type)).toEqual(['authorization_code'])
  })
  it('a refresh whose connection breaks is said so, not taken for a missing grant', async () => {
    await grantConnection('wiki', oauth.auth, APPROVER)
    const granted = await storedWiki()
    oauth.auth.expireAccessTokens()
    oauth.auth.options.tokenEndpoint = 'reset'
    fakes.ai.enqueue(reply.text('No wiki.'))
    const id = await startRun({ task: 'Search', tools: ['wiki__search'] })
    await drainAlarms(id)
    const trace = await getTrace(id)
    expect(trace.skippedTools).toEqual([
      {
        tool: 'wiki__*',
        reason: expect.stringContaining(
          'could not be reached (OAuth with the wiki MCP server failed: https://auth.test/token: Network connection lost.)',
        ),
      },
    ])
    expect(await storedWiki()).toEqual(granted)
  })
})
