/**
 * A response stream the server closes in the middle of a call (SEP-1699: it sends a priming
 * event with an id and `retry:`, closes, and answers later) is resumed: after the `retry:` the
 * server asked for, a GET carrying `Last-Event-ID` brings the answer. The call is sent once.
 */
import { describe, expect, it } from 'vitest'
import { reply } from '../fakes/fake-openai'
import { FakeMcp, FAKE_MCP_HOST } from '../fakes/fake-mcp'
import { drainAlarms, getTrace, startRun, useServiceFakes } from '../service/harness'

let mcp: FakeMcp
const fakes = useServiceFakes({
  hosts: () => {
    mcp = new FakeMcp()
    mcp.closeStreamOf.add('search')
    return { [FAKE_MCP_HOST]: mcp.handler }
  },
})

describe('an MCP response stream the server closes mid-call', () => {
  it('is resumed with Last-Event-ID after the retry the server gave, and the call answers', async () => {
    fakes.ai.enqueue(
      reply.toolCalls([{ id: 'c1', name: 'docs__search', arguments: { query: 'rollback' } }]),
      reply.text('Found it.'),
    )
    const id = await startRun({ task: 'Search', tools: ['docs__search'] })
    await drainAlarms(id)

    const trace = await getTrace(id)
    expect(trace).toMatchObject({ ok: true, answer: 'Found it.' })
    expect(trace.steps[0]!.calls[0]!.observation).toContain('3 pages mention "rollback"')
    expect(mcp.methods.filter((m) => m === 'tools/call search')).toHaveLength(1)

    const [closedAt] = mcp.streamsClosedAt
    const resumed = mcp.gets.filter((g) => g.lastEventId !== null)
    expect(closedAt).toBeDefined()
    expect(resumed).toHaveLength(1)
    // The SDK waits 1 s by default; the server asked for 300 ms.
    const waited = resumed[0]!.at - closedAt!
    expect(waited).toBeGreaterThanOrEqual(mcp.retryMs - 50)
    expect(waited).toBeLessThan(1_000)
  })
})
