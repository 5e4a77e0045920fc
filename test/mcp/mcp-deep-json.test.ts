/**
 * JSON an MCP server controls, nested any depth (1 to 10,000 levels): a tool whose inputSchema
 * nests deeper than MAX_JSON_DEPTH is left out with a clear reason (trace, /readyz), never a
 * RangeError that fails the run; a result nested that deep is written out as the observation.
 * Through the Worker, against the real SDK server of test/fakes/fake-mcp.ts.
 */
import { describe, expect, it } from 'vitest'
import { MAX_JSON_DEPTH } from '../../src/validation/json-walk'
import { reply } from '../fakes/fake-openai'
import { FakeMcp, mcpTestHosts } from '../fakes/fake-mcp'
import { AUTH, api, drainAlarms, getTrace, startRun, useServiceFakes } from '../service/harness'

let mcp: FakeMcp
const fakes = useServiceFakes({
  hosts: () => mcpTestHosts((m) => (mcp = m)),
})

const DEPTHS = [1, 10, MAX_JSON_DEPTH - 1, MAX_JSON_DEPTH + 1, 1_000, 10_000]

/** A JSON Schema `depth` levels deep: properties inside properties, as JSON text. */
function deepSchema(depth: number): string {
  // Each level is an object schema and its properties map: two levels of JSON.
  const levels = Math.max(0, Math.ceil(depth / 2) - 1)
  return (
    '{"type":"object","properties":{"a":'.repeat(levels) + '{"type":"object"}' + '}}'.repeat(levels)
  )
}

/** `depth` levels of objects around a number: `{"a":{"a":1}}` is 2. */
function deepValue(depth: number): string {
  return '{"a":'.repeat(depth) + '1' + '}'.repeat(depth)
}

describe.each(DEPTHS)('an MCP server’s JSON nested %i levels deep', (depth) => {
  const deep = depth > MAX_JSON_DEPTH

  it('in a tool’s inputSchema: the tool is left out with the reason, the run goes on', async () => {
    mcp.listAlsoJson.push(`{"name":"nested","inputSchema":${deepSchema(depth)}}`)
    fakes.ai.enqueue(reply.text('Done.'))
    const id = await startRun({ task: 'Use the docs', tools: ['docs__*'] })
    await drainAlarms(id)
    const trace = await getTrace(id)
    expect(trace).toMatchObject({ ok: true, stopReason: 'finish', answer: 'Done.' })
    const offered = fakes.ai.bodies[0]!.tools!.map((t) => t.function.name)
    const skipped = (trace.skippedTools ?? []).filter((s) => s.tool === 'docs__nested')
    if (deep) {
      expect(offered).not.toContain('docs__nested')
      expect(skipped).toEqual([
        {
          tool: 'docs__nested',
          reason: `its inputSchema nests more than ${MAX_JSON_DEPTH} levels deep`,
        },
      ])
    } else {
      expect(offered).toContain('docs__nested')
      expect(skipped).toEqual([])
    }
    expect(offered).toContain('docs__search')
  })

  it('in a tool’s result: the observation holds it, the run goes on', async () => {
    mcp.listAlsoJson.push(
      '{"name":"nest","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}',
    )
    mcp.resultJson.set('nest', `{"content":[],"structuredContent":${deepValue(depth)}}`)
    fakes.ai.enqueue(
      reply.toolCalls([{ id: 'c1', name: 'docs__nest', arguments: {} }]),
      reply.text('Read it.'),
    )
    const id = await startRun({ task: 'Nest', tools: ['docs__nest'] })
    await drainAlarms(id)
    const trace = await getTrace(id)
    expect(trace).toMatchObject({ ok: true, answer: 'Read it.' })
    const call = trace.steps[0]!.calls[0]!
    expect(call.kind, call.observation.slice(0, 200)).toBe('ok')
    expect(call.observation.startsWith('{"a":'.repeat(Math.min(depth, 20)))).toBe(true)
  })
})

describe('/readyz with a tool nested too deep', () => {
  it('names it in a warning and stays ready', async () => {
    mcp.listAlsoJson.push(`{"name":"nested","inputSchema":${deepSchema(10_000)}}`)
    const res = await api('/readyz', { headers: AUTH })
    expect(res.status).toBe(200)
    const body = (await res.json()) as { ok: boolean; warnings: string[] }
    expect(body.warnings).toContain(
      `MCP_SERVERS: docs__nested: its inputSchema nests more than ${MAX_JSON_DEPTH} levels deep: left out of runs`,
    )
  })
})
