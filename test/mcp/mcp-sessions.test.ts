/**
 * MCP sessions through the Worker: one per server per slice (one Durable Object invocation),
 * opened on first use, shared by the tool listing and the calls, ended with a DELETE when the
 * slice ends. The fake server (test/fakes/fake-mcp.ts) keeps sessions as the Streamable HTTP spec
 * says, counts every initialize and DELETE, and can forget its sessions or drop a connection.
 */
import { describe, expect, it } from 'vitest'
import { reply } from '../fakes/fake-openai'
import { FakeMcp, FAKE_MCP_HOST } from '../fakes/fake-mcp'
import {
  decide,
  drainAlarms,
  getRun,
  getTrace,
  startRun,
  useServiceFakes,
} from '../service/harness'

let mcp: FakeMcp
const fakes = useServiceFakes({
  hosts: () => {
    mcp = new FakeMcp()
    return { [FAKE_MCP_HOST]: mcp.handler }
  },
})

const search = (id: string, query: string) => ({ id, name: 'docs__search', arguments: { query } })
const deletePage = { id: 'd1', name: 'docs__delete_page', arguments: { page: 'faq' } }

/** The DELETE requests the server got (each ends a session). */
const deletes = () => fakes.outbound.to(FAKE_MCP_HOST).filter((r) => r.method === 'DELETE')

/** How many times the server was posted `method` (`tools/call <tool>` for a call). */
const posted = (method: string) => mcp.methods.filter((m) => m === method).length

async function approve(id: string, callId: string): Promise<void> {
  const pending = (await getRun(id)).pendingApprovals.find((p) => p.callId === callId)!
  await decide(id, callId, { decision: 'approve', args_hash: pending.argsHash })
  await drainAlarms(id)
}

describe('MCP sessions of a run', () => {
  it('are one per slice: the tool list and three calls share one initialize, then one DELETE', async () => {
    fakes.ai.enqueue(
      reply.toolCalls([search('c1', 'rollback'), search('c2', 'deploy')]),
      reply.toolCalls([search('c3', 'alarm')]),
      reply.text('Found them.'),
    )
    const id = await startRun({ task: 'Search three things', tools: ['docs__search'] })
    expect(await drainAlarms(id)).toBe(1) // the whole run is one slice

    expect(await getTrace(id)).toMatchObject({ ok: true, answer: 'Found them.' })
    expect(mcp.calls.map((c) => c.args.query)).toEqual(['rollback', 'deploy', 'alarm'])
    expect(mcp.initializes).toBe(1)
    expect(mcp.methods).toEqual([
      'initialize',
      'notifications/initialized',
      'tools/list',
      'tools/call search',
      'tools/call search',
      'tools/call search',
    ])
    expect(deletes()).toHaveLength(1)
    expect(mcp.ended).toBe(1)
    expect(mcp.openSessions).toBe(0)
  })

  it('are opened again in the next slice, and each slice’s is ended', async () => {
    fakes.ai.enqueue(
      reply.toolCalls([search('c1', 'faq')]),
      reply.toolCalls([deletePage]),
      reply.toolCalls([search('c2', 'links to faq')]),
      reply.text('Deleted the FAQ.'),
    )
    const id = await startRun({ task: 'Delete the FAQ', tools: ['docs__*'] })
    await drainAlarms(id)
    expect((await getRun(id)).status).toBe('awaiting_approval')
    expect([mcp.initializes, mcp.ended, mcp.openSessions]).toEqual([1, 1, 0])

    await approve(id, 'd1')
    expect(await getTrace(id)).toMatchObject({ ok: true, answer: 'Deleted the FAQ.' })
    expect(mcp.calls.map((c) => c.tool)).toEqual(['search', 'delete_page', 'search'])
    expect([mcp.initializes, mcp.ended, mcp.openSessions]).toEqual([2, 2, 0])
    expect(deletes()).toHaveLength(2)
  })

  it('of a server that keeps none (stateless) still share one initialize, and send no DELETE', async () => {
    mcp.stateless = true
    fakes.ai.enqueue(
      reply.toolCalls([search('c1', 'a'), search('c2', 'b')]),
      reply.toolCalls([search('c3', 'c')]),
      reply.text('Done.'),
    )
    const id = await startRun({ task: 'Search', tools: ['docs__search'] })
    await drainAlarms(id)
    expect(await getTrace(id)).toMatchObject({ ok: true, answer: 'Done.' })
    expect(mcp.calls).toHaveLength(3)
    expect(mcp.initializes).toBe(1)
    expect(deletes()).toEqual([])
  })
})

describe('a broken MCP session', () => {
  it('mid-slice, forgotten by the server (404): the next read-only call reconnects', async () => {
    fakes.ai.enqueue(
      reply.toolCalls([search('c1', 'first')]),
      reply.toolCalls([search('c2', 'second')]),
      reply.text('Both found.'),
    )
    mcp.forgetSessionsAfter = 'tools/call search' // as if it restarted right after answering c1
    const id = await startRun({ task: 'Search twice', tools: ['docs__search'] })
    await drainAlarms(id)

    const trace = await getTrace(id)
    expect(trace).toMatchObject({ ok: true, answer: 'Both found.' })
    expect(trace.steps.flatMap((s) => s.calls.map((c) => c.observation))).toEqual([
      '3 pages mention "first"',
      '3 pages mention "second"',
    ])
    expect(posted('tools/call search')).toBe(3) // c2 met the 404, then went in a new session
    expect(mcp.calls.map((c) => c.args.query)).toEqual(['first', 'second'])
    expect(mcp.initializes).toBe(2)
    expect(deletes()).toHaveLength(1) // the new session's; the server ended the old one itself
    expect(mcp.openSessions).toBe(0)
  })

  it('mid-call, its connection broken: a read-only call is sent once more in a new session', async () => {
    fakes.ai.enqueue(reply.toolCalls([search('c1', 'first')]), reply.text('Found.'))
    mcp.dropConnection.add('search')
    const id = await startRun({ task: 'Search', tools: ['docs__search'] })
    await drainAlarms(id)

    expect((await getTrace(id)).steps[0]!.calls[0]).toMatchObject({
      kind: 'ok',
      observation: '3 pages mention "first"',
    })
    expect(mcp.calls.map((c) => c.args.query)).toEqual(['first', 'first']) // read-only: harmless
    expect(mcp.initializes).toBe(2)
    // The broken session may still be alive on the server: it is ended too.
    expect(deletes()).toHaveLength(2)
    expect(mcp.openSessions).toBe(0)
  })

  it('under a side effect that the server did not take (404): reported, not sent again', async () => {
    fakes.ai.enqueue(
      reply.toolCalls([deletePage]),
      reply.toolCalls([search('c2', 'faq')]),
      reply.text('The delete did not happen; the FAQ is still there.'),
    )
    const id = await startRun({ task: 'Delete the FAQ', tools: ['docs__*'] })
    await drainAlarms(id)
    // The session opened for the delete ends between its handshake and the call.
    mcp.forgetSessionsAfter = 'notifications/initialized'
    await approve(id, 'd1')

    const trace = await getTrace(id)
    expect(trace.steps[0]!.calls[0]).toMatchObject({
      status: 'done',
      kind: 'tool_error',
      observation:
        '[ToolError] docs__delete_page failed: Error: the docs MCP server answered that its ' +
        'session had ended (HTTP 404), so it did not take the delete_page call; edgeloop did not ' +
        'send it again. A new session is opened for the next call: call it again if it is still ' +
        'needed',
    })
    expect(posted('tools/call delete_page')).toBe(1)
    expect(mcp.calls.map((c) => c.tool)).toEqual(['search'])
    expect(trace.steps[1]!.calls[0]).toMatchObject({ kind: 'ok' }) // the next call reconnects
    expect(mcp.initializes).toBe(3)
    expect(mcp.openSessions).toBe(0)
  })

  it('under a side effect the server took before the connection broke: may have landed, sent once', async () => {
    fakes.ai.enqueue(reply.toolCalls([deletePage]), reply.text('It may be deleted; I will check.'))
    const id = await startRun({ task: 'Delete the FAQ', tools: ['docs__*'] })
    await drainAlarms(id)
    mcp.dropConnection.add('delete_page')
    await approve(id, 'd1')

    const call = (await getTrace(id)).steps[0]!.calls[0]!
    expect(call).toMatchObject({ status: 'done', kind: 'tool_error' })
    expect(call.observation).toBe(
      "[ToolError] docs__delete_page failed: Error: the delete_page call's session with the docs " +
        'MCP server broke while it was sent (the connection to the docs MCP server failed ' +
        '(TypeError: Network connection lost.)); it may have taken effect, so edgeloop did not ' +
        'send it again. Check its effect before retrying',
    )
    expect(mcp.calls.map((c) => c.tool)).toEqual(['delete_page']) // it landed, once
    expect(posted('tools/call delete_page')).toBe(1)
    expect(mcp.openSessions).toBe(0)
  })
})
