/**
 * A session that outlives its server's `timeout_ms` ends with its DELETE and nothing else: the
 * `initialize` request was answered long before, so the session never cancels it (the spec
 * forbids cancelling `initialize`, and servers answer such a notification with 400).
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

describe('an MCP session that outlives timeout_ms', () => {
  it('never cancels its answered initialize', async () => {
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
