/** A MODEL=script run exported to OpenTelemetry names the scripted model as what answered. */
import { env } from 'cloudflare:workers'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { FakeMcp, FAKE_MCP_HOST } from '../fakes/fake-mcp'
import { FAKE_OTLP_HOST, FakeOtlp } from '../fakes/fake-otlp'
import { drainAlarms, getRun, startRun, useServiceFakes } from '../service/harness'

let otlp: FakeOtlp
// No provider host: a scripted run must not make a single model request.
useServiceFakes({
  openai: false,
  hosts: () => {
    otlp = new FakeOtlp()
    // The project's configured MCP server (its tools are listed as runs start).
    const mcp = new FakeMcp()
    return { [FAKE_OTLP_HOST]: (req) => otlp.handler(req), [FAKE_MCP_HOST]: mcp.handler }
  },
})

const vars = env as unknown as Record<string, string | undefined>
beforeEach(() => {
  vars.OTEL_EXPORTER_OTLP_ENDPOINT = 'https://otlp.test'
})
afterEach(() => {
  delete vars.OTEL_EXPORTER_OTLP_ENDPOINT
})

describe('MODEL=script in the exported trace', () => {
  it('gen_ai.provider.name is edgeloop.script on the run and every model call, not openai', async () => {
    const task = 'call calculator with {"expression": "6 * 7"}, then finish with 42'
    const id = await startRun({ task })
    await drainAlarms(id)
    expect((await getRun(id)).status).toBe('succeeded')
    expect(otlp.violations).toEqual([])
    const spans = otlp.accepted().filter((s) => /^(invoke_agent|chat) /.test(s.name))
    expect(spans.map((s) => s.name).sort()).toEqual([
      'chat script',
      'chat script',
      'invoke_agent default',
    ])
    for (const span of spans) {
      expect(span.attributes['gen_ai.provider.name']).toBe('edgeloop.script')
      expect(span.attributes['gen_ai.request.model']).toBe('script')
    }
  })
})
