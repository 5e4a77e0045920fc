/**
 * What bounds delegation (docs/agents.md#delegation): cycles and unknown delegates are refused
 * where agents are checked (`/readyz` names them), and a run at MAX_DELEGATION_DEPTH cannot
 * start a child.
 */
import { env } from 'cloudflare:workers'
import { describe, expect, it } from 'vitest'
import { defineAgent } from '../../agents/index'
import { resolveAgents, type AgentLimits } from '../../src/config/agents'
import { modelConfigFromEnv } from '../../src/config'
import { DEFAULT_BUDGET } from '../../src/kernel/budget'
import { runStub } from '../../src/runs/types'
import { reply } from '../fakes/fake-openai'
import { AUTH, drainAlarms, getRun, useServiceFakes } from '../service/harness'
import { fetchWith } from '../service/worker-with'

const fakes = useServiceFakes()

const limits: AgentLimits = {
  enabledTools: ['calculator', 'http_post'],
  mcpServers: [],
  policy: { mode: 'ask' },
  maxBudget: { ...DEFAULT_BUDGET, maxSteps: 50 },
  defaultBudget: DEFAULT_BUDGET,
  model: modelConfigFromEnv({ MODEL: 'gpt-test', OPENAI_API_KEY: 'sk-x' }),
}
const base = { description: 'd', instructions: 'i' }

function problemsOf(agents: ReturnType<typeof defineAgent>[], enabled: string[] = []) {
  try {
    resolveAgents(enabled, limits, [defineAgent({ name: 'default', ...base }), ...agents])
    return []
  } catch (err) {
    return (err as { problems: { agent: string; field: string; message: string }[] }).problems
  }
}

describe('delegates are checked with the agents', () => {
  it('a cycle is refused, naming it', () => {
    expect(
      problemsOf([
        defineAgent({ name: 'a', ...base, tools: [], delegates: ['b'] }),
        defineAgent({ name: 'b', ...base, tools: [], delegates: ['c'] }),
        defineAgent({ name: 'c', ...base, tools: [], delegates: ['a'] }),
      ]),
    ).toEqual([
      {
        agent: 'a',
        field: 'delegates',
        message: 'delegation cycle a → b → c → a; an agent may not reach itself',
      },
    ])
    expect(
      problemsOf([defineAgent({ name: 'self', ...base, tools: [], delegates: ['self'] })]),
    ).toEqual([expect.objectContaining({ message: expect.stringContaining('self → self') })])
  })

  it('an unknown delegate, and one whose ask_ name a tool has, are refused', () => {
    const problems = problemsOf(
      [defineAgent({ name: 'lead', ...base, tools: [], delegates: ['ghost', 'x'] })],
      [],
    )
    expect(problems).toEqual([
      {
        agent: 'lead',
        field: 'delegates',
        message: 'ghost, x: not agents of this deployment (ENABLED_AGENTS gives default, lead)',
      },
    ])
    const clash = { ...limits, enabledTools: ['calculator', 'ask_helper'] }
    expect(() =>
      resolveAgents([], clash, [
        defineAgent({ name: 'default', ...base, tools: [] }),
        defineAgent({ name: 'helper', ...base, tools: [] }),
        defineAgent({ name: 'lead', ...base, tools: [], delegates: ['helper'] }),
      ]),
    ).toThrow(/agent "lead" delegates: ask_helper is a tool's name already/)
  })

  it('ENABLED_AGENTS brings the agents an enabled one delegates to', async () => {
    const res = await fetchWith({ ENABLED_AGENTS: 'lead' }, '/v1/agents', {
      headers: { authorization: 'Bearer test-token' },
    })
    expect(res.status).toBe(200)
    const { agents } = (await res.json()) as { agents: { name: string; delegates: string[] }[] }
    expect(agents.map((a) => [a.name, a.delegates])).toEqual([
      ['default', []],
      ['triage', []],
      ['lead', ['triage', 'default']],
    ])
  })

  it('/readyz: MAX_DELEGATION_DEPTH is validated', async () => {
    const res = await fetchWith({ MAX_DELEGATION_DEPTH: '0' }, '/readyz', { headers: AUTH })
    expect(res.status).toBe(503)
    expect(JSON.stringify(await res.json())).toContain('MAX_DELEGATION_DEPTH')
  })
})

describe('depth', () => {
  it('a run at MAX_DELEGATION_DEPTH (3) cannot start a child: the call is a [ToolError]', async () => {
    const id = `run_${'d'.repeat(32)}`
    fakes.ai.enqueue(
      reply.toolCalls([{ id: 'call_d', name: 'ask_triage', arguments: { task: 'Triage it' } }]),
      reply.text('Triaged it myself.'),
    )
    // A run three delegations deep, as its parent would have started it.
    await runStub(env.RUNS, id).start({
      id,
      task: 'Handle it',
      tools: ['ask_triage', 'ask_default'],
      budget: DEFAULT_BUDGET,
      protocol: 'native',
      policy: { mode: 'ask' },
      agent: { name: 'lead' },
      requestedBy: 'api',
      owner: null,
      parent: { runId: `run_${'e'.repeat(32)}`, callId: 'call_x', agent: 'lead', depth: 3 },
    })
    await drainAlarms(id)
    const view = await getRun(id)
    expect(view.parentRunId).toBe(`run_${'e'.repeat(32)}`)
    expect(view.children).toEqual([])
    expect(view.result.steps[0]!.calls[0]!.observation).toBe(
      '[ToolError] ask_triage: this run is 3 delegations deep and MAX_DELEGATION_DEPTH is 3: it cannot start a child run; do the task with your own tools',
    )
    expect(view.result.answer).toBe('Triaged it myself.')
  })
})
