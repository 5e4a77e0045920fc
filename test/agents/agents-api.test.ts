/**
 * Agents through the Worker's fetch: the list and one agent, a run naming its agent (its
 * snapshot, its instructions first in a prompt that stays byte-identical from step to step),
 * ad-hoc instructions, narrowing that never widens, and the run list's agent filter.
 */
import { describe, expect, it } from 'vitest'
import { reply } from '../fakes/fake-openai'
import {
  api,
  AUTH,
  drainAlarms,
  getRun,
  postJson,
  startRun,
  useServiceFakes,
} from '../service/harness'
import { fetchWith } from '../service/worker-with'
import { shippedOf } from '../fixtures/shipped-agents'

const fakes = useServiceFakes()
const READER = { authorization: 'Bearer test-reader-token' }

describe('GET /v1/agents', () => {
  it('lists the agents with their tools, model, protocol and output schema (runs:read)', async () => {
    const res = await api('/v1/agents', { headers: READER })
    expect(res.status).toBe(200)
    const { agents } = (await res.json()) as { agents: Record<string, unknown>[] }
    // MODEL is not the demo, so the demo agent is not offered.
    expect(shippedOf(agents.map((a) => String(a.name)))).toEqual(['default', 'triage', 'lead'])
    expect(agents[0]).toEqual({
      name: 'default',
      description: expect.any(String),
      tools: [
        'calculator',
        'http_get',
        'http_post',
        'query_metrics',
        'search_logs',
        'read_repo_file',
        'rollback_deploy',
      ],
      model: null,
      protocol: null,
      outputSchema: null,
      delegates: [],
    })
    expect(agents[1]).toMatchObject({
      name: 'triage',
      tools: [],
      outputSchema: {
        type: 'object',
        properties: { severity: { enum: ['sev1', 'sev2', 'sev3'] } },
        required: ['severity', 'component', 'summary'],
      },
    })
    expect(agents[2]).toMatchObject({ name: 'lead', tools: [], delegates: ['triage', 'default'] })
  })

  it('gives one agent with its instructions; an unknown one is 404 agent_not_found', async () => {
    const res = await api('/v1/agents/triage', { headers: READER })
    expect(res.status).toBe(200)
    const agent = (await res.json()) as Record<string, unknown>
    expect(agent.instructions).toMatch(/^You triage incoming incident and bug reports/)
    expect(
      (await (await api('/v1/agents/default', { headers: READER })).json()) as object,
    ).toMatchObject({ name: 'default', instructions: '' })
    const missing = await api('/v1/agents/nobody', { headers: READER })
    expect(missing.status).toBe(404)
    expect(await missing.json()).toMatchObject({
      error: { code: 'agent_not_found', message: expect.stringContaining('"nobody"') },
    })
  })

  it('needs a token with runs:read', async () => {
    expect((await api('/v1/agents')).status).toBe(401)
    const starterOnly = await fetchWith(
      {
        API_TOKENS: JSON.stringify([
          {
            name: 'w',
            sha256: '4ffedf3172961c9d899956463c776d784322cb87bb88f53750f7345ec024c342',
            scopes: ['runs:write'],
          },
        ]),
      },
      '/v1/agents',
      { headers: { authorization: 'Bearer test-starter-token' } },
    )
    expect(starterOnly.status).toBe(403)
  })
})

describe('POST /v1/runs with an agent', () => {
  it('an unknown agent is 404 agent_not_found naming it, and starts nothing', async () => {
    const res = await postJson('/v1/runs', { task: 'x', agent: 'nobody' })
    expect(res.status).toBe(404)
    expect(await res.json()).toMatchObject({
      error: { code: 'agent_not_found', message: expect.stringContaining('"nobody"') },
    })
  })

  it('no agent: the default agent, the prompt as before, and the run records it', async () => {
    fakes.ai.enqueue(
      reply.toolCalls([{ name: 'calculator', arguments: { expression: '6 * 7' } }]),
      reply.text('42'),
    )
    const id = await startRun({ task: 'Compute 6 * 7', tools: ['calculator'] })
    await drainAlarms(id)
    const view = await getRun(id)
    expect(view.agent).toEqual({
      name: 'default',
      version: expect.stringMatching(/^[0-9a-f]{12}$/),
    })
    expect(view.result.agent).toEqual(view.agent)
    expect(view.result).not.toHaveProperty('output')
    const [first, second] = fakes.ai.bodies
    expect(first!.messages[0]!.content).toMatch(/^You are an agent that solves the task/)
    expect(second!.messages[0]).toEqual(first!.messages[0])
  })

  it('ad-hoc instructions come first in the system prompt, byte-identical at every step', async () => {
    const instructions = 'You are the billing assistant. Answer in one sentence.'
    fakes.ai.enqueue(
      reply.toolCalls([{ name: 'calculator', arguments: { expression: '2 + 2' } }]),
      reply.toolCalls([{ name: 'calculator', arguments: { expression: '3 + 3' } }]),
      reply.text('Done.'),
    )
    const id = await startRun({ task: 'Add things', tools: ['calculator'], instructions })
    await drainAlarms(id)
    expect(fakes.ai.bodies).toHaveLength(3)
    const systems = fakes.ai.bodies.map((b) => b.messages[0])
    expect(systems[0]).toMatchObject({ role: 'system' })
    expect(systems[0]!.content).toMatch(
      new RegExp(`^${instructions.replace(/\./g, '\\.')}\\n\\nYou are an agent that solves`),
    )
    expect(systems[1]).toEqual(systems[0])
    expect(systems[2]).toEqual(systems[0])
    const view = await getRun(id)
    const plain = await startRun({ task: 'Add things', tools: ['calculator'] })
    // The version is a hash of what the run copied: other instructions, another version.
    expect(view.agent.version).not.toBe((await getRun(plain)).agent.version)
    fakes.ai.enqueue(reply.text('ok'))
    await drainAlarms(plain)
  })

  it.each([
    [
      { agent: 'triage', tools: ['calculator'] },
      'tools_not_allowed',
      /tools: calculator not tools of agent "triage"/,
    ],
    [
      { agent: 'triage', confirm: { mode: 'ask' } },
      'policy_not_allowed',
      /^confirm: .*agent "triage"/,
    ],
    [{ instructions: 'x'.repeat(20_001) }, 'invalid_request', /instructions/],
    [
      { output_schema: { type: 'object', properties: { a: { type: 'strin' } } } },
      'invalid_output_schema',
      /output_schema \/properties\/a\/type/,
    ],
    [{ output_schema: { type: 'object', required: 'a' } }, 'invalid_output_schema', /required/],
    [{ output_schema: deep(14) }, 'invalid_output_schema', /levels deep; at most 12/],
    [
      { output_schema: { type: 'string', pattern: '([' } },
      'invalid_output_schema',
      /pattern: not a valid regular expression/,
    ],
  ])('a wider or bad ask is a 400 naming the field: %j', async (ask, code, message) => {
    const res = await postJson('/v1/runs', { task: 'Triage this', ...ask })
    expect(res.status).toBe(400)
    const body = (await res.json()) as { error: { code: string; message: string } }
    expect(body.error.code).toBe(code)
    expect(body.error.message).toMatch(message)
  })

  it('a budget above the agent’s is a 400 naming budget.<field> (offline demo settings)', async () => {
    const res = await fetchWith({ MODEL: 'demo', OPENAI_API_KEY: undefined }, '/v1/runs', {
      method: 'POST',
      headers: { ...AUTH, 'content-type': 'application/json' },
      body: JSON.stringify({ task: 'x', agent: 'oncall', budget: { maxSteps: 9 } }),
    })
    expect(res.status).toBe(400)
    expect(await res.json()).toMatchObject({
      error: {
        code: 'budget_over_agent',
        message: expect.stringContaining('budget.maxSteps 9 > 8'),
      },
    })
  })
})

describe('GET /v1/runs?agent=', () => {
  it('lists only the runs of that agent; a bad name is a 400', async () => {
    fakes.ai.enqueue(reply.text('Plain.'))
    const plain = await startRun({ task: 'Plain run', tools: ['calculator'] })
    await drainAlarms(plain)
    fakes.ai.enqueue(
      reply.toolCalls([
        {
          name: 'final_answer',
          arguments: { answer: { severity: 'sev3', component: 'ui', summary: 'A typo.' } },
        },
      ]),
    )
    const triaged = await startRun({ task: 'Typo on the pricing page', agent: 'triage' })
    await drainAlarms(triaged)
    const page = async (q: string) => {
      const res = await api(`/v1/runs?limit=100${q}`, { headers: AUTH })
      expect(res.status).toBe(200)
      return ((await res.json()) as { items: { id: string; agent: unknown }[] }).items
    }
    const mine = (items: { id: string }[]) =>
      items.filter((i) => i.id === plain || i.id === triaged).map((i) => i.id)
    expect(mine(await page('&agent=triage'))).toEqual([triaged])
    expect(mine(await page('&agent=default'))).toEqual([plain])
    const item = (await page('')).find((i) => i.id === triaged)!
    expect(item.agent).toEqual((await getRun(triaged)).agent)
    expect((await api('/v1/runs?agent=Bad!', { headers: AUTH })).status).toBe(400)
  })
})

function deep(levels: number): Record<string, unknown> {
  let schema: Record<string, unknown> = { type: 'string' }
  for (let i = 0; i < levels; i++) schema = { type: 'object', properties: { a: schema } }
  return schema
}
