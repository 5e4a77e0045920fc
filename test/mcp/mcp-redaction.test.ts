/**
 * A secret is recognised by its value, whatever its setting is called. The "docs" server's token
 * lives in DOCS_MCP_AUTH (vitest.config.ts), a name no rule by name would call a secret; the
 * fake server and the fake provider echo it in every place a tool or a provider can, and it must
 * be in nothing edgeloop stores, streams, logs, sends back to the model or delivers.
 */
import { runInDurableObject } from 'cloudflare:test'
import { describe, expect, it } from 'vitest'
import { reply } from '../fakes/fake-openai'
import { FakeMcp, FAKE_MCP_TOKEN, mcpTestHosts } from '../fakes/fake-mcp'
import {
  api,
  AUTH,
  drainAlarms,
  getRun,
  getTrace,
  RECEIVER,
  startRun,
  stubOf,
  useServiceFakes,
} from '../service/harness'

let mcp: FakeMcp
const fakes = useServiceFakes({
  hosts: () => mcpTestHosts((m) => (mcp = m)),
})

const call = (id: string, name: string, args: Record<string, unknown>) => ({
  id,
  name,
  arguments: args,
})

/** Every row of every table of the run's Durable Object, as one text. */
async function everythingStored(id: string): Promise<string> {
  return runInDurableObject(stubOf(id), (_instance, state) => {
    const sql = state.storage.sql
    const tables = sql
      .exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table'")
      .toArray()
      .map((t) => t.name)
      .filter((t) => !t.startsWith('_cf') && !t.startsWith('sqlite_'))
    expect(tables.length).toBeGreaterThan(2)
    return JSON.stringify(tables.map((t) => sql.exec(`SELECT * FROM "${t}"`).toArray()))
  })
}

/** Everything anyone can read about the run, and everything it sent out. */
async function everythingShown(id: string): Promise<Record<string, string>> {
  const events = await api(`/v1/runs/${id}/events`, { headers: AUTH })
  expect(events.status).toBe(200)
  return {
    view: JSON.stringify(await getRun(id)),
    trace: JSON.stringify(await getTrace(id)),
    events: await events.text(),
    'model requests': JSON.stringify(fakes.ai.bodies),
    storage: await everythingStored(id),
    logs: fakes.logs.mock.calls.flat().map(String).join('\n'),
    callbacks: JSON.stringify(fakes.receiver.hits.map((h) => h.body)),
  }
}

function expectNoToken(shown: Record<string, string>): void {
  for (const [where, text] of Object.entries(shown)) {
    expect(text.includes(FAKE_MCP_TOKEN), `the token in the ${where}`).toBe(false)
  }
}

describe('a secret echoed by a tool or a provider', () => {
  it('is in nothing stored, streamed, logged, delivered or sent to the model', async () => {
    mcp.echoesToken = true
    // The tool list itself may echo it (a description written from the request it answered).
    mcp.listAlso.push({
      name: 'token_info',
      description: `Says what ${FAKE_MCP_TOKEN} may do.`,
      inputSchema: { type: 'object' },
      annotations: { readOnlyHint: true },
    })
    fakes.ai.enqueue(
      // An observation and an isError result, side by side.
      reply.toolCalls([call('c1', 'docs__whoami', {}), call('c2', 'docs__whoami', { fail: true })]),
      // Past the truncation point: only the whole stored by handle holds it.
      reply.toolCalls([call('c3', 'docs__whoami', { long: true })]),
      reply.toolCalls([call('c4', 'read_observation', { handle: 'obs_c3', offset: 15_900 })]),
      // The provider echoes it in its answer.
      reply.text(`Done; the server knows you as ${FAKE_MCP_TOKEN}.`),
    )
    const id = await startRun({
      task: 'Who am I on the docs server?',
      tools: ['docs__*'],
      callback_url: `https://${RECEIVER}/hooks/edgeloop`,
      callback_events: 'all',
    })
    await drainAlarms(id)

    // The server did get the token, and echoed it back each time.
    expect(mcp.calls.map((c) => c.tool)).toEqual(['whoami', 'whoami', 'whoami'])
    const trace = await getTrace(id)
    expect(trace).toMatchObject({ ok: true, answer: 'Done; the server knows you as [redacted].' })
    const calls = trace.steps.flatMap((s) => s.calls)
    expect(calls[0]!.observation).toBe('you are Bearer [redacted]')
    expect(calls[1]).toMatchObject({ kind: 'tool_error' })
    expect(calls[1]!.observation).toContain(
      'answered with an error: Bearer [redacted] may not do that',
    )
    expect(calls[2]).toMatchObject({ truncated: true, handle: 'obs_c3' })
    expect(calls[3]!.observation).toContain('you are Bearer [redacted]')
    const whole = await api(`/v1/runs/${id}/observations/obs_c3`, { headers: AUTH })
    expect(await whole.text()).toContain('you are Bearer [redacted]')
    const offered = fakes.ai.bodies[0]!.tools!.find((t) => t.function.name === 'docs__token_info')
    expect(offered!.function.description).toBe('Says what [redacted] may do.')
    // The callbacks were delivered (the run's result and its events).
    expect(fakes.receiver.hits.length).toBeGreaterThan(3)
    expectNoToken(await everythingShown(id))
  })

  it('in a careless 401 body leaves no trace of it in the run, its trace or the model’s tools', async () => {
    mcp.refusesEchoing = true
    fakes.ai.enqueue(
      reply.toolCalls([call('c1', 'docs__search', { query: 'x' })]),
      reply.text('No.'),
    )
    const id = await startRun({ task: 'Search', tools: ['docs__search'] })
    await drainAlarms(id)
    const trace = await getTrace(id)
    // A 401 is a refusal, not "unreachable"; its body (the echoed token) is not repeated at all.
    expect(trace.steps[0]!.calls[0]!.observation).toMatch(
      /refused this run when it started \(the docs MCP server answered HTTP 401: needs a connection/,
    )
    expect(trace.skippedTools).toEqual([
      {
        tool: 'docs__*',
        reason: expect.stringContaining('the docs MCP server needs a connection'),
      },
    ])
    expectNoToken(await everythingShown(id))
    const ready = await api('/readyz', { headers: AUTH })
    const body = await ready.text()
    expect(body).toContain('the docs MCP server needs a connection')
    expect(body).not.toContain(FAKE_MCP_TOKEN)
  })

  it('in a provider’s error is not in the run’s error, its view or the logs', async () => {
    fakes.ai.enqueue(reply.error(400, `bad request: header ${FAKE_MCP_TOKEN} is not allowed`))
    const id = await startRun({ task: 'Say hi', tools: ['calculator'] })
    await drainAlarms(id)
    const trace = await getTrace(id)
    expect(trace).toMatchObject({ ok: false, stopReason: 'model_error' })
    expect(trace.error).toContain('header [redacted] is not allowed')
    expectNoToken(await everythingShown(id))
  })
})
