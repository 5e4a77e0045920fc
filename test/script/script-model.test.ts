/**
 * MODEL=script through the Worker's fetch: a run follows the script its task spells out, in both
 * protocols, through a read-only tool, an MCP tool and a side effect that waits for approval.
 */
import { describe, expect, it } from 'vitest'
import { FakeMcp, FAKE_MCP_HOST } from '../fakes/fake-mcp'
import {
  api,
  AUTH,
  decide,
  drainAlarms,
  getRun,
  getTrace,
  RECEIVER,
  startRun,
  useServiceFakes,
} from '../service/harness'

let mcp: FakeMcp
// No provider host: a scripted run must not make a single model request.
const fakes = useServiceFakes({
  openai: false,
  hosts: () => {
    mcp = new FakeMcp()
    return { [FAKE_MCP_HOST]: mcp.handler }
  },
})

const POST = `call http_post with {"url": "https://${RECEIVER}/tickets", "body": {"title": "p99"}}`

describe.each(['native', 'text'] as const)('MODEL=script, %s protocol', (protocol) => {
  it('calls the tools the task names, waits for the approval, and finishes as told', async () => {
    const task = [
      'call `calculator` with {"expression": "6 * 7"}',
      'then call docs__search with {"query": "rollback"}',
      `then ${POST}`,
      'then finish with Filed the ticket.',
    ].join('\n')
    const id = await startRun({ task, protocol })
    await drainAlarms(id)
    const waiting = await getRun(id)
    expect(waiting.status).toBe('awaiting_approval')
    expect(waiting.pendingApprovals).toEqual([
      expect.objectContaining({
        tool: 'http_post',
        args: { url: `https://${RECEIVER}/tickets`, body: { title: 'p99' } },
      }),
    ])
    expect(fakes.receiver.hits).toHaveLength(0)

    const pending = waiting.pendingApprovals[0]!
    const res = await decide(id, pending.callId, {
      decision: 'approve',
      args_hash: pending.argsHash,
    })
    expect(res.status).toBe(200)
    await drainAlarms(id)

    const trace = await getTrace(id)
    expect(trace).toMatchObject({ ok: true, stopReason: 'finish', answer: 'Filed the ticket.' })
    expect(trace.protocol).toBe(protocol)
    expect(trace.model).toBe('script')
    const calls = trace.steps.flatMap((s) => s.calls)
    expect(calls.map((c) => [c.name, c.status])).toEqual([
      ['calculator', 'done'],
      ['docs__search', 'done'],
      ['http_post', 'done'],
    ])
    expect(calls[0]!.observation).toContain('42')
    expect(calls[1]!.observation).toContain('3 pages mention "rollback"')
    expect(fakes.receiver.hits).toHaveLength(1)
    expect(mcp.calls.map((c) => c.tool)).toEqual(['search'])
  })
})

describe.each(['native', 'text'] as const)(
  'MODEL=script with a structured answer, %s',
  (protocol) => {
    const output_schema = {
      type: 'object',
      properties: { total: { type: 'number' } },
      required: ['total'],
    }

    it('finishes with the JSON the script gives when it fits the schema', async () => {
      const task = 'call calculator with {"expression": "6 * 7"}, then finish with {"total": 42}'
      const id = await startRun({ task, protocol, output_schema })
      await drainAlarms(id)
      expect(await getTrace(id)).toMatchObject({ ok: true, output: { total: 42 } })
    })

    it('an answer that fails the schema ends output_invalid, as documented', async () => {
      const id = await startRun({ task: 'finish with {"total": "many"}', protocol, output_schema })
      await drainAlarms(id)
      const trace = await getTrace(id)
      expect(trace).toMatchObject({ ok: false, stopReason: 'output_invalid' })
      expect(trace.steps.map((s) => s.kind)).toContain('format_error')
    })
  },
)

describe('MODEL=script', () => {
  it('without a finish, ends with the last observation', async () => {
    const id = await startRun({ task: 'call calculator with {"expression": "2 + 3"}' })
    await drainAlarms(id)
    expect(await getTrace(id)).toMatchObject({
      ok: true,
      stopReason: 'finish',
      answer: '2 + 3 = 5',
    })
  })

  it('fails a task that is not a script, and says how to write one', async () => {
    const id = await startRun({ task: 'What is 2 + 2?' })
    await drainAlarms(id)
    const trace = await getTrace(id)
    expect(trace).toMatchObject({ ok: false, stopReason: 'model_error' })
    expect(trace.error).toContain('MODEL=script could not read the task as a script')
    expect(trace.error).toContain('call <tool> with {json arguments}')
  })

  it('says so in the readiness warnings', async () => {
    const res = await api('/readyz', { headers: AUTH })
    expect(res.status).toBe(200)
    expect(((await res.json()) as { warnings: string[] }).warnings).toContain(
      'MODEL=script: runs follow the script written in their task, not a real model',
    )
  })

  it('names each agent it does not offer, and why (the demo agents)', async () => {
    const res = await api('/readyz', { headers: AUTH })
    const { warnings } = (await res.json()) as { warnings: string[] }
    const agents = (await (await api('/v1/agents', { headers: AUTH })).json()) as {
      agents: { name: string }[]
    }
    const listed = agents.agents.map((a) => a.name)
    for (const name of ['oncall', 'log_analyst']) {
      expect(listed).not.toContain(name)
      expect(warnings).toContain(
        `agent "${name}" is not offered (GET /v1/agents leaves it out): its model is "demo" ` +
          '(the offline demo), offered only with MODEL=demo (MODEL is "script")',
      )
    }
  })
})
