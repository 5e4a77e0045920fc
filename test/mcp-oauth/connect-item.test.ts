/**
 * A run that needs a connection waits on a `connect` pending item (docs/mcp.md#oauth): here a
 * grant that can no longer be refreshed, found when an approved side effect is sent (a 401: the
 * server took nothing). The item names the server, whose connection and why; a grant through
 * the connect link for that run and item resolves it at the callback, and the call is sent once.
 */
import { describe, expect, it } from 'vitest'
import { reply } from '../fakes/fake-openai'
import { api, decide, drainAlarms, getRun, getTrace, startRun } from '../service/harness'
import {
  ALPHA,
  APPROVER,
  type Browser,
  callback,
  connectionList,
  connectLink,
  followLink,
  grantConnection,
  useOAuthFakes,
} from './oauth-helpers'

const { fakes, oauth } = useOAuthFakes()

/** The approver grants the deployment's wiki connection (for the run's item, when given). */
async function grantWiki(item?: { runId: string; itemId: string }): Promise<Browser> {
  const browser = await grantConnection('wiki', oauth.auth, APPROVER, item)
  if (item) await drainAlarms(item.runId)
  return browser
}

/** The run's one step, the wiki page deleted: what the model answered and the server got. */
async function expectDeleted(id: string): Promise<void> {
  expect(await getTrace(id)).toMatchObject({ ok: true, answer: 'Deleted.' })
  expect(oauth.wiki.calls.map((c) => [c.tool, c.args])).toEqual([['delete_page', { page: 'old' }]])
}

describe('a run whose person has not connected a per-person server', () => {
  it('offers its tools; a call waits on a connect item for that person, then goes', async () => {
    fakes.ai.enqueue(
      reply.toolCalls([{ id: 'c1', name: 'tracker__search', arguments: { query: 'bugs' } }]),
      reply.text('Found.'),
    )
    const started = await api('/v1/runs', {
      method: 'POST',
      headers: { ...ALPHA, 'content-type': 'application/json' },
      body: JSON.stringify({ task: 'Search', tools: ['tracker__search'] }),
    })
    const { id } = (await started.json()) as { id: string }
    await drainAlarms(id)
    // Its real policy was never listed: a side effect, approved first.
    const asked = await getRun(id)
    expect(asked.pendingApprovals).toEqual([
      expect.objectContaining({ callId: 'c1', kind: 'approval' }),
    ])
    await decide(id, 'c1', { decision: 'approve', args_hash: asked.pendingApprovals[0]!.argsHash })
    await drainAlarms(id)
    const item = (await getRun(id)).pendingApprovals[0]
    expect(item).toMatchObject({
      kind: 'connect',
      ask: { details: { server: 'tracker', owner: 'token:alpha', grantor: 'token:alpha' } },
    })
    // The inbox says where its Connect action goes: the server's link route, for this item.
    const inbox = (await (await api('/v1/inbox', { headers: ALPHA })).json()) as {
      items: { runId: string; callId: string; actions: string[]; href: string | null }[]
    }
    const listed = inbox.items.find((i) => i.runId === id && i.callId === 'c1')!
    expect(listed).toMatchObject({ actions: ['connect'], href: '/v1/connections/tracker/link' })
    expect(item!.href).toBe(listed.href)
    const server = listed.href!.split('/')[3]!
    const browser = await followLink(
      await connectLink(server, ALPHA, { runId: id, itemId: 'c1' }),
      oauth.auth,
    )
    expect((await callback(browser.callback, browser.cookie)).status).toBe(200)
    await drainAlarms(id)
    expect((await getTrace(id)).steps[0]!.calls[0]!.observation).toBe('3 pages mention "bugs"')
    expect(oauth.tracker.calls.map((c) => c.tool)).toEqual(['search'])
  })
})

describe('a run whose connection is gone', () => {
  it('waits on a connect item; the grant at the callback resolves it and the call goes once', async () => {
    await grantWiki()
    fakes.ai.enqueue(
      reply.toolCalls([{ id: 'c1', name: 'wiki__delete_page', arguments: { page: 'old' } }]),
      reply.text('Deleted.'),
    )
    const id = await startRun({ task: 'Delete the old page', tools: ['wiki__delete_page'] })
    await drainAlarms(id)
    const asked = await getRun(id)
    expect(asked.status).toBe('awaiting_approval')
    // While the approval waits, the grant dies: its access token expires, its refresh is refused.
    oauth.auth.expireAccessTokens()
    oauth.auth.revokeRefreshTokens()
    const approved = await decide(id, 'c1', {
      decision: 'approve',
      args_hash: asked.pendingApprovals[0]!.argsHash,
    })
    expect(approved.status).toBe(200)
    await drainAlarms(id)

    const waiting = await getRun(id)
    expect(waiting.status).toBe('awaiting_approval')
    const item = waiting.pendingApprovals.find((p) => p.kind === 'connect')
    expect(item).toMatchObject({
      callId: 'c1',
      kind: 'connect',
      actions: ['connect'],
      ask: {
        details: {
          server: 'wiki',
          owner: 'deployment',
          reason: 'refresh_failed',
          grantor: 'approvals:write',
          link: '/v1/connections/wiki/link',
        },
      },
    })
    expect(oauth.wiki.calls).toEqual([])
    expect(await connectionList()).toEqual([])

    await grantWiki({ runId: id, itemId: 'c1' })
    await expectDeleted(id)
    expect(await connectionList()).toEqual([
      expect.objectContaining({ server: 'wiki', grantor: 'token:approver' }),
    ])
  })
})

describe('a run whose server asks for more scope (403 insufficient_scope: step-up)', () => {
  it('waits on a connect item naming the scope; a link for that item asks for it', async () => {
    const first = await grantWiki()
    expect(first.authorize.searchParams.get('scope')).toBe('read') // the server's challenge
    fakes.ai.enqueue(
      reply.toolCalls([{ id: 'c1', name: 'wiki__delete_page', arguments: { page: 'old' } }]),
      reply.text('Deleted.'),
    )
    const id = await startRun({ task: 'Delete the old page', tools: ['wiki__delete_page'] })
    await drainAlarms(id)
    const asked = await getRun(id)
    // While the approval waits, the server starts asking for more scope than was granted.
    oauth.wikiAccess.scope = 'admin'
    await decide(id, 'c1', { decision: 'approve', args_hash: asked.pendingApprovals[0]!.argsHash })
    await drainAlarms(id)
    const item = (await getRun(id)).pendingApprovals.find((p) => p.kind === 'connect')
    expect(item).toMatchObject({
      callId: 'c1',
      ask: { details: { server: 'wiki', scopes: 'admin', reason: 'insufficient_scope' } },
    })

    // The person asks for a link for the item and names no scope: the item's is asked for.
    const browser = await grantWiki({ runId: id, itemId: 'c1' })
    expect(browser.authorize.searchParams.get('scope')).toBe('admin')
    await expectDeleted(id)
  })
})

describe('a server that asks for more scope when the run lists its tools (step-up at listing)', () => {
  it('offers the tool; its call waits on a connect item naming the scope, then goes', async () => {
    await grantWiki()
    // Before the run starts, the server wants more than the "read" that was granted.
    oauth.wikiAccess.scope = 'admin'
    fakes.ai.enqueue(
      reply.toolCalls([{ id: 'c1', name: 'wiki__delete_page', arguments: { page: 'old' } }]),
      reply.text('Deleted.'),
    )
    const id = await startRun({ task: 'Delete the old page', tools: ['wiki__delete_page'] })
    await drainAlarms(id)
    // The listing was refused with 403 insufficient_scope: the trace says so, and the tool is
    // offered as a stand-in whose real policy was never listed (a side effect, approved first).
    expect((await getTrace(id)).skippedTools).toEqual([
      { tool: 'wiki__*', reason: expect.stringMatching(/forbidden.*needs scope admin/) },
    ])
    const asked = await getRun(id)
    expect(asked.pendingApprovals).toEqual([
      expect.objectContaining({ callId: 'c1', kind: 'approval' }),
    ])
    await decide(id, 'c1', { decision: 'approve', args_hash: asked.pendingApprovals[0]!.argsHash })
    await drainAlarms(id)
    const item = (await getRun(id)).pendingApprovals.find((p) => p.kind === 'connect')
    expect(item).toMatchObject({
      callId: 'c1',
      kind: 'connect',
      ask: { details: { server: 'wiki', scopes: 'admin', reason: 'insufficient_scope' } },
    })
    expect(oauth.wiki.calls).toEqual([])

    const browser = await grantWiki({ runId: id, itemId: 'c1' })
    expect(browser.authorize.searchParams.get('scope')).toBe('admin')
    await expectDeleted(id)
  })

  it('a server offered whole gets a connect stand-in, not an unavailable one', async () => {
    await grantWiki()
    oauth.wikiAccess.scope = 'admin'
    fakes.ai.enqueue(
      reply.toolCalls([{ id: 'c1', name: 'wiki__unavailable', arguments: {} }]),
      reply.text('Connected.'),
    )
    const id = await startRun({ task: 'Use the wiki', tools: ['wiki__*'] })
    await drainAlarms(id)
    // Read-only (nothing is sent but the list): it asks for the connection at once.
    const item = (await getRun(id)).pendingApprovals.find((p) => p.kind === 'connect')
    expect(item).toMatchObject({
      callId: 'c1',
      ask: { details: { server: 'wiki', scopes: 'admin', reason: 'insufficient_scope' } },
    })
    await grantWiki({ runId: id, itemId: 'c1' })
    const trace = await getTrace(id)
    expect(trace).toMatchObject({ ok: true, answer: 'Connected.' })
    expect(trace.steps[0]!.calls[0]!.observation).toMatch(/wiki MCP server is connected/)
  })
})
