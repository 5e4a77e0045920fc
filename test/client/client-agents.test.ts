/** The client's agent methods against the Worker: listAgents, getAgent, startRun with an agent. */
import { exports } from 'cloudflare:workers'
import { describe, expect, it } from 'vitest'
import { EdgeloopClient, EdgeloopError } from '../../src/client'
import { reply } from '../fakes/fake-openai'
import { API_TOKEN, drainAlarms, ORIGIN, useServiceFakes } from '../service/harness'
import { shippedOf } from '../fixtures/shipped-agents'

const fakes = useServiceFakes()
const client = new EdgeloopClient({
  baseUrl: ORIGIN,
  token: API_TOKEN,
  fetch: (request) => exports.default.fetch(request),
})

describe('EdgeloopClient and agents', () => {
  it('lists the agents and gets one; an unknown one is an EdgeloopError agent_not_found', async () => {
    const { agents } = await client.listAgents()
    expect(shippedOf(agents.map((a) => a.name))).toEqual(['default', 'triage', 'lead'])
    const triage = await client.getAgent('triage')
    expect(triage.instructions).toMatch(/^You triage/)
    expect(triage.outputSchema).toMatchObject({ type: 'object' })
    const err = await client.getAgent('nobody').catch((e: unknown) => e)
    expect(err).toBeInstanceOf(EdgeloopError)
    expect(err).toMatchObject({ status: 404, code: 'agent_not_found' })
  })

  it('starts a run with an agent, ad-hoc instructions and output_schema; lists by agent', async () => {
    fakes.ai.enqueue(reply.text('{"n": 3}'))
    const created = await client.startRun({
      task: 'Count to three',
      instructions: 'You count.',
      output_schema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] },
      tools: ['calculator'],
    })
    await drainAlarms(created.id)
    const trace = await client.trace(created.id)
    expect(trace).toMatchObject({ ok: true, output: { n: 3 }, agent: { name: 'default' } })
    expect(fakes.ai.lastBody().messages[0]!.content).toMatch(/^You count\.\n\n/)
    fakes.ai.enqueue(
      reply.toolCalls([
        {
          name: 'final_answer',
          arguments: { answer: { severity: 'sev1', component: 'api', summary: 'Down.' } },
        },
      ]),
    )
    const triaged = await client.startRun({ task: 'The API is down', agent: 'triage' })
    await drainAlarms(triaged.id)
    expect((await client.getRun(triaged.id)).agent.name).toBe('triage')
    const page = await client.listRuns({ agent: 'triage', limit: 100 })
    expect(page.items.map((i) => i.id)).toContain(triaged.id)
    expect(page.items.map((i) => i.id)).not.toContain(created.id)
  })
})
