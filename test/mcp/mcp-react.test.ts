/**
 * MCP tools in an in-memory `react()` run: the kernel knows nothing of MCP, so the caller scopes
 * the sessions — `withMcpSessions` gives the run one session per server and ends it when the run
 * is over. Without a scope, every operation has a session of its own.
 */
import { env } from 'cloudflare:test'
import { describe, expect, it } from 'vitest'
import { react } from '../../src/kernel/index'
import { freezeMcpTools, mcpTools, readMcpServers, withMcpSessions } from '../../src/mcp/index'
import { FakeMcp, FAKE_MCP_HOST } from '../fakes/fake-mcp'
import { nativeCall, nativeCalls, ScriptedModel, textFinish } from '../fakes/scripted-model'
import { useServiceFakes } from '../service/harness'

let mcp: FakeMcp
useServiceFakes({
  openai: false,
  hosts: () => {
    mcp = new FakeMcp()
    return { [FAKE_MCP_HOST]: mcp.handler }
  },
})

const servers = () => readMcpServers(env as unknown as Record<string, string>)
const search = (id: string, query: string) => nativeCall('docs__search', { query }, id)
const model = () =>
  new ScriptedModel([
    nativeCalls([search('c1', 'rollback'), search('c2', 'deploy')]),
    nativeCalls([search('c3', 'alarm')]),
    textFinish('Found them.'),
  ])

describe('MCP tools in react()', () => {
  it('share one session per server for the run (parallel first calls too), ended after it', async () => {
    const frozen = await freezeMcpTools(servers(), ['docs__search'], 'native') // a session of its own
    expect([mcp.initializes, mcp.ended]).toEqual([1, 1])

    const result = await withMcpSessions(undefined, (sessions) =>
      react('Search three things', mcpTools(frozen, servers(), sessions).tools, { model: model() }),
    )
    expect(result).toMatchObject({ ok: true, answer: 'Found them.' })
    expect(mcp.calls.map((c) => c.args.query)).toEqual(['rollback', 'deploy', 'alarm'])
    expect([mcp.initializes, mcp.ended, mcp.openSessions]).toEqual([2, 2, 0])
  })

  it('without a scope, open a session per call', async () => {
    const frozen = await freezeMcpTools(servers(), ['docs__search'], 'native')
    const result = await react('Search', mcpTools(frozen, servers()).tools, { model: model() })
    expect(result).toMatchObject({ ok: true, answer: 'Found them.' })
    expect([mcp.initializes, mcp.ended, mcp.openSessions]).toEqual([4, 4, 0])
  })

  // The spec forbids cancelling `initialize`; servers answer such a notification with 400.
  it('end a session that outlived timeout_ms with its DELETE alone, never cancelling its answered initialize', async () => {
    const docs = servers().find((s) => s.name === 'docs')!
    const frozen = await freezeMcpTools(servers(), ['docs__search'], 'native')
    mcp.methods.length = 0
    const ended = mcp.ended // the listing's own session
    const model = new ScriptedModel([
      nativeCalls([nativeCall('docs__search', { query: 'rollback' }, 'c1')]),
      textFinish('Found it.'),
    ])
    await withMcpSessions(undefined, async (sessions) => {
      const result = await react('Search', mcpTools(frozen, servers(), sessions).tools, { model })
      expect(result).toMatchObject({ ok: true, answer: 'Found it.' })
      // The slice goes on past the server's timeout before its sessions end.
      await new Promise((r) => setTimeout(r, docs.timeoutMs + 300))
    })
    expect(mcp.methods).toEqual(['initialize', 'notifications/initialized', 'tools/call search'])
    expect(mcp.refusals).toEqual([])
    expect([mcp.ended - ended, mcp.openSessions]).toEqual([1, 0])
  })
})
