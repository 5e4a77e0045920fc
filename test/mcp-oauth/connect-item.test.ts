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
  callback,
  connectionList,
  connectLink,
  followLink,
  useOAuthFakes,
} from './oauth-helpers'

const { fakes, oauth } = useOAuthFakes()

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
    const first = await followLink(await connectLink('wiki', APPROVER), oauth.auth)
    expect((await callback(first.callback, first.cookie)).status).toBe(200)
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

    const browser = await followLink(
      await connectLink('wiki', APPROVER, { runId: id, itemId: 'c1' }),
      oauth.auth,
    )
    expect((await callback(browser.callback, browser.cookie)).status).toBe(200)
    await drainAlarms(id)
    const trace = await getTrace(id)
    expect(trace).toMatchObject({ ok: true, answer: 'Deleted.' })
    expect(oauth.wiki.calls.map((c) => [c.tool, c.args])).toEqual([
      ['delete_page', { page: 'old' }],
    ])
    expect(await connectionList()).toEqual([
      expect.objectContaining({ server: 'wiki', grantor: 'token:approver' }),
    ])
  })
})
