/**
 * Nothing an MCP server lists can fail a run: a name listed twice, a name that is taken, a
 * server that is down, hints that contradict each other. Through the Worker (the "docs" and
 * "down" servers of vitest.config.ts) and, for what one deployment cannot show, through
 * `freezeMcpTools` against the same fake server.
 */
import { env } from 'cloudflare:test'
import { describe, expect, it } from 'vitest'
import { freezeMcpTools, frozenToolNames, mcpTools, readMcpServers } from '../../src/mcp/index'
import { reply } from '../fakes/fake-openai'
import { fetchWith } from '../service/worker-with'
import { FakeMcp, FAKE_MCP_HOST, FAKE_MCP_TOKEN, mcpTestHosts } from '../fakes/fake-mcp'
import {
  AUTH,
  api,
  drainAlarms,
  getRun,
  getTrace,
  startRun,
  useServiceFakes,
} from '../service/harness'

let mcp: FakeMcp
const fakes = useServiceFakes({
  hosts: () => mcpTestHosts((m) => (mcp = m)),
})

const call = (id: string, name: string, args: Record<string, unknown>) =>
  reply.toolCalls([{ id, name, arguments: args }])
const offeredNames = (n = 0) => fakes.ai.bodies[n]!.tools!.map((t) => t.function.name)
const docsOnly = () =>
  readMcpServers(env as unknown as Record<string, string>).filter((s) => s.name === 'docs')

describe('a server that lists a tool twice', () => {
  it('is offered the first one; the run goes on and its trace lists the one left out', async () => {
    mcp.listAlso.push({
      name: 'search',
      description: 'Another search.',
      inputSchema: { type: 'object' },
    })
    fakes.ai.enqueue(call('c1', 'docs__search', { query: 'rollback' }), reply.text('Three.'))
    const id = await startRun({ task: 'How many pages mention rollback?', tools: ['docs__*'] })
    await drainAlarms(id)
    const trace = await getTrace(id)
    expect(trace).toMatchObject({ ok: true, answer: 'Three.' })
    expect(offeredNames().filter((n) => n === 'docs__search')).toHaveLength(1)
    const search = fakes.ai.bodies[0]!.tools!.find((t) => t.function.name === 'docs__search')!
    expect(search.function.description).toBe('Search the docs. query: words to look for.')
    expect(trace.steps[0]!.calls[0]).toMatchObject({ observation: '3 pages mention "rollback"' })
    expect(trace.skippedTools).toEqual([
      { tool: 'docs__pages.export', reason: expect.stringContaining('not a usable tool name') },
      {
        tool: 'docs__search',
        reason: 'the docs MCP server lists "search" twice; the first is kept',
      },
    ])
    expect((await getRun(id)).result.skippedTools).toEqual(trace.skippedTools)
  })

  it('does not fail a run with the default tool set (every server, as webhooks and Slack)', async () => {
    mcp.listAlso.push({ name: 'search', inputSchema: { type: 'object' } })
    fakes.ai.enqueue(reply.text('Hello.'))
    const id = await startRun({ task: 'Say hello' })
    await drainAlarms(id)
    const trace = await getTrace(id)
    expect(trace).toMatchObject({ ok: true, stopReason: 'finish', answer: 'Hello.' })
    expect(trace.skippedTools).toEqual(
      expect.arrayContaining([
        { tool: 'docs__search', reason: expect.stringContaining('lists "search" twice') },
      ]),
    )
  })
})

describe('a server that is down when the run starts', () => {
  it('is a warning in the trace, its tools are not in the run, and the run goes on', async () => {
    fakes.ai.enqueue(reply.text('Hello.'))
    const id = await startRun({ task: 'Say hello' })
    await drainAlarms(id)
    const trace = await getTrace(id)
    expect(trace).toMatchObject({ ok: true, answer: 'Hello.' })
    expect(trace.skippedTools).toEqual([
      { tool: 'docs__pages.export', reason: expect.stringContaining('not a usable tool name') },
      {
        tool: 'down__*',
        reason: expect.stringMatching(
          /^the down MCP server could not be reached \(HTTP 503: .*\); runs go on without its tools$/,
        ),
      },
    ])
    expect(offeredNames().filter((n) => n.startsWith('down__'))).toEqual(['down__unavailable'])
  })
})

describe('names that are taken', () => {
  it('a built-in or one-file tool keeps its name: the server’s tool of that name is refused', async () => {
    const frozen = await freezeMcpTools(docsOnly(), ['docs__*'], 'native', undefined, {
      reserved: ['docs__search'],
    })
    expect(frozenToolNames(frozen)).not.toContain('docs__search')
    expect(frozen[0]!.skipped).toContain(
      'docs__search: the name of a built-in or one-file tool, which keeps it',
    )
    // A record frozen before names were checked is built without the taken name, never thrown.
    const old = [{ server: 'docs', tools: [{ name: 'search', inputSchema: { type: 'object' } }] }]
    const built = mcpTools([...old, ...old], docsOnly(), undefined, ['calculator'])
    expect(built.tools.map((t) => t.name)).toEqual(['docs__search'])
    expect(built.skipped).toEqual(['docs__search: the name is taken; the first is kept'])
  })

  it('two servers whose prefixed names meet: the first server in MCP_SERVERS keeps it', async () => {
    // "docs" + "__" + "_search" and "docs_" + "__" + "search" are both docs___search.
    mcp.listAlso.push({ name: '_search', inputSchema: { type: 'object' } })
    const entry = { url: `https://${FAKE_MCP_HOST}/mcp`, token_secret: 'DOCS_MCP_AUTH' }
    const servers = readMcpServers({
      MCP_SERVERS: JSON.stringify([
        { name: 'docs', ...entry },
        { name: 'docs_', ...entry },
      ]),
      DOCS_MCP_AUTH: FAKE_MCP_TOKEN,
    })
    const frozen = await freezeMcpTools(servers, ['docs__*', 'docs___*'], 'native')
    expect(frozenToolNames(frozen).filter((n) => n === 'docs___search')).toHaveLength(1)
    expect(frozen[0]!.tools.map((t) => t.name)).toContain('_search')
    expect(frozen[1]!.tools.map((t) => t.name)).not.toContain('search')
    expect(frozen[1]!.skipped).toContain(
      'docs___search: the same name as a tool of the docs MCP server, which keeps it',
    )
  })
})

describe('hints that contradict each other', () => {
  it('readOnlyHint and destructiveHint together: the stricter reading, it needs approval', async () => {
    mcp.contradictoryHints = true
    fakes.ai.enqueue(call('c1', 'docs__purge', {}))
    const id = await startRun({ task: 'Purge the cache', tools: ['docs__purge'] })
    await drainAlarms(id)
    const view = await getRun(id)
    expect(view.status).toBe('awaiting_approval')
    expect(view.pendingApprovals).toMatchObject([{ callId: 'c1', tool: 'docs__purge' }])
    expect(mcp.calls).toEqual([])
  })
})

describe('/readyz with MCP servers', () => {
  it('warns about a server that is down and a tool listed twice; still ready', async () => {
    mcp.listAlso.push({ name: 'search', inputSchema: { type: 'object' } })
    const res = await api('/readyz', { headers: AUTH })
    expect(res.status).toBe(200)
    const body = (await res.json()) as { ok: boolean; warnings: string[] }
    expect(body.ok).toBe(true)
    expect(body.warnings).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^MCP_SERVERS: the down MCP server could not be reached \(HTTP 503/),
        'MCP_SERVERS: docs__search: the docs MCP server lists "search" twice; the first is kept: left out of runs',
      ]),
    )
    // The readiness check's sessions are ended, not left on the server.
    expect(mcp.openSessions).toBe(0)
  })
})

describe('/readyz cannot be used to multiply traffic to the MCP servers', () => {
  it('anonymous callers cause no MCP request; 20 at once with a token cause one check', async () => {
    // The same servers, written anew: a check of its own, not one an earlier test left to reuse.
    const servers = JSON.stringify(JSON.parse(String(env.MCP_SERVERS)), null, 1)
    const readyz = (init?: RequestInit) => fetchWith({ MCP_SERVERS: servers }, '/readyz', init)
    const before = [mcp.initializes, mcp.listed]
    expect(before).toEqual([0, 0])
    const anonymous = await Promise.all(Array.from({ length: 20 }, () => readyz()))
    expect(anonymous.map((r) => r.status)).toEqual(Array(20).fill(200))
    for (const res of anonymous) expect(await res.text()).not.toContain('MCP')
    expect([mcp.initializes, mcp.listed]).toEqual([0, 0])
    const operators = await Promise.all(Array.from({ length: 20 }, () => readyz({ headers: AUTH })))
    const bodies = await Promise.all(operators.map((r) => r.json()))
    expect(new Set(bodies.map((b) => JSON.stringify(b))).size).toBe(1)
    expect(bodies[0]).toMatchObject({ ok: true })
    // One deep check answered all twenty, and the next caller within seconds reuses it.
    expect([mcp.initializes, mcp.listed]).toEqual([1, 1])
    await readyz({ headers: AUTH })
    expect(mcp.listed).toBe(1)
  })
})
