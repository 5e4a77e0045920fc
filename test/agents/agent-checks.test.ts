/**
 * Every agent is checked where settings are checked: /readyz and /healthz?deep=1 answer
 * 503 misconfigured naming the agent and the field, and no run starts meanwhile.
 */
import { describe, expect, it } from 'vitest'
import * as z from 'zod/mini'
import { defineAgent } from '../../agents/index'
import { resolveAgents, resolveAgentSet, type AgentLimits } from '../../src/config/agents'
import { AUTH, useServiceFakes } from '../service/harness'
import { fetchWith } from '../service/worker-with'
import { DEFAULT_BUDGET } from '../../src/kernel/budget'
import { modelConfigFromEnv } from '../../src/config'

useServiceFakes()

type Problem = { variable: string; message: string; agent?: string; field?: string }

async function problemsOf(settings: Record<string, string | undefined>, path = '/readyz') {
  const res = await fetchWith(settings, path, { headers: AUTH })
  expect(res.status).toBe(503)
  const body = (await res.json()) as { error: { code: string; details: { problems: Problem[] } } }
  expect(body.error.code).toBe('misconfigured')
  return body.error.details.problems
}

describe('agents in /readyz and /healthz?deep=1', () => {
  it.each(['/readyz', '/healthz?deep=1'])(
    '%s: the demo agent without the demo model names agent, field and file',
    async (path) => {
      const problems = await problemsOf(
        { ENABLED_AGENTS: 'oncall', ENABLED_TOOLS: 'calculator' },
        path,
      )
      expect(problems).toEqual([
        {
          variable: 'agents/oncall.ts',
          agent: 'oncall',
          field: 'tools',
          message: expect.stringContaining(
            'query_metrics, read_repo_file, rollback_deploy not offered by this deployment',
          ),
        },
        {
          variable: 'agents/oncall.ts',
          agent: 'oncall',
          field: 'model',
          message: expect.stringContaining('"demo" is not in MODEL_ALLOWLIST'),
        },
        {
          variable: 'agents/log-analyst.ts',
          agent: 'log_analyst',
          field: 'tools',
          message: expect.stringContaining('search_logs not offered by this deployment'),
        },
        {
          variable: 'agents/log-analyst.ts',
          agent: 'log_analyst',
          field: 'model',
          message: expect.stringContaining('"demo" is not in MODEL_ALLOWLIST'),
        },
      ])
    },
  )

  it('a budget over a server maximum names the agent and budget', async () => {
    const problems = await problemsOf({ MODEL: 'demo', OPENAI_API_KEY: undefined, MAX_STEPS: '5' })
    expect(problems).toEqual([
      expect.objectContaining({
        agent: 'oncall',
        field: 'budget',
        message: expect.stringContaining('maxSteps 8 > 5'),
      }),
    ])
  })

  it('an unknown name in ENABLED_AGENTS is a problem of ENABLED_AGENTS', async () => {
    const problems = await problemsOf({ ENABLED_AGENTS: 'triage,nobody' })
    expect(problems).toEqual([
      expect.objectContaining({
        variable: 'ENABLED_AGENTS',
        message: expect.stringContaining('nobody'),
      }),
    ])
  })

  it('while an agent is misconfigured no run starts: 503 misconfigured', async () => {
    const res = await fetchWith({ ENABLED_AGENTS: 'oncall' }, '/v1/runs', {
      method: 'POST',
      headers: { ...AUTH, 'content-type': 'application/json' },
      body: JSON.stringify({ task: 'x' }),
    })
    expect(res.status).toBe(503)
    expect(await res.json()).toMatchObject({
      error: { code: 'misconfigured', message: expect.stringContaining('agent "oncall" model') },
    })
  })

  it('ENABLED_AGENTS=oncall under MODEL=demo is ready, and lists default, oncall and its delegate', async () => {
    const ready = await fetchWith(
      { MODEL: 'demo', OPENAI_API_KEY: undefined, ENABLED_AGENTS: 'oncall' },
      '/readyz',
      { headers: AUTH },
    )
    expect(ready.status).toBe(200)
    const list = await fetchWith(
      { MODEL: 'demo', OPENAI_API_KEY: undefined, ENABLED_AGENTS: 'oncall' },
      '/v1/agents',
      { headers: AUTH },
    )
    const { agents } = (await list.json()) as { agents: { name: string }[] }
    expect(agents.map((a) => a.name)).toEqual(['default', 'oncall', 'log_analyst'])
  })
})

describe('resolveAgents', () => {
  const limits: AgentLimits = {
    enabledTools: ['calculator', 'http_post'],
    mcpServers: [{ name: 'docs' } as AgentLimits['mcpServers'][number]],
    policy: { mode: 'ask' },
    maxBudget: { ...DEFAULT_BUDGET, maxSteps: 20 },
    defaultBudget: DEFAULT_BUDGET,
    model: modelConfigFromEnv({ MODEL: 'gpt-test', OPENAI_API_KEY: 'sk-x' }),
  }
  const base = { description: 'd', instructions: 'i' }
  // Named in ENABLED_AGENTS: every problem is the deployment's (an unset list may leave an agent
  // out instead: below).
  const problemsOf = (agents: ReturnType<typeof defineAgent>[]) => {
    try {
      resolveAgents(
        agents.map((a) => String(a.name)),
        limits,
        [defineAgent({ name: 'default', ...base }), ...agents],
      )
      return []
    } catch (err) {
      return (err as { problems: { agent: string; field: string; message: string }[] }).problems
    }
  }

  it('takes what the deployment offers: its tools, MCP tools and patterns, a narrower policy', () => {
    const agents = resolveAgents([], limits, [
      defineAgent({ name: 'default', ...base }),
      defineAgent({
        name: 'ok',
        ...base,
        tools: ['calculator', 'docs__search', 'docs__*'],
        confirm: { mode: 'dry_run' },
        budget: { maxSteps: 20 },
        output: z.object({ a: z.number() }),
        slack: { channels: ['C0123ABC'], approvals: 'G0APPROVALS' },
      }),
    ])
    expect(agents[0]).toMatchObject({ name: 'default', slackApprovals: null })
    expect(agents[1]).toMatchObject({
      name: 'ok',
      policy: { mode: 'dry_run' },
      budget: { maxSteps: 20 },
      outputSchema: { type: 'object', required: ['a'] },
      slackChannels: ['C0123ABC'],
      slackApprovals: 'G0APPROVALS',
    })
  })

  it.each([
    [{ name: 'Bad Name' }, 'name', /must match/],
    [{ tools: ['nope', 'other__x'] }, 'tools', /nope, other__x not offered/],
    [{ model: 'gpt-other' }, 'model', /not in MODEL_ALLOWLIST/],
    [{ temperature: 3 }, 'temperature', /from 0 to 2/],
    [{ confirm: { mode: 'allow' } }, 'confirm', /looser than the configured "ask"/],
    [{ budget: { maxSteps: 21 } }, 'budget', /maxSteps 21 > 20/],
    [{ budget: { maxStepz: 2 } }, 'budget', /maxStepz/],
    [
      { output: { type: 'object', properties: { a: { type: 7 } } } },
      'output',
      /\/properties\/a\/type/,
    ],
    [{ output: 'not a schema' }, 'output', /zod schema or a JSON Schema object/],
    [{ slack: { channels: ['general'] } }, 'slack.channels', /general are not Slack channel ids/],
    [{ slack: { approvals: '#ops' } }, 'slack.approvals', /"#ops" is not a Slack channel id/],
  ])('names the field of a bad agent: %j', (fields, field, message) => {
    const problems = problemsOf([defineAgent({ name: 'bad', ...base, ...(fields as object) })])
    expect(problems).toEqual([
      {
        agent: (fields as { name?: string }).name ?? 'bad',
        field,
        message: expect.stringMatching(message),
      },
    ])
  })

  it('with ENABLED_AGENTS unset, leaves out an agent whose only problems are the settings, with why', () => {
    const catalog = [
      defineAgent({ name: 'default', ...base }),
      defineAgent({ name: 'counter', ...base, tools: ['counter', 'calculator'] }),
      defineAgent({ name: 'pricey', ...base, model: 'gpt-other' }),
      defineAgent({ name: 'calc', ...base, tools: ['calculator'] }),
    ]
    const { agents, leftOut } = resolveAgentSet([], limits, catalog)
    expect(agents.map((a) => a.name)).toEqual(['default', 'calc'])
    expect(leftOut).toEqual([
      { agent: 'counter', reason: expect.stringMatching(/^tools counter not offered/) },
      {
        agent: 'pricey',
        reason: expect.stringMatching(/^model "gpt-other" is not in MODEL_ALLOW/),
      },
    ])
    // Named, the same agent is the deployment's problem: 503 misconfigured naming its field.
    expect(() => resolveAgentSet(['counter'], limits, catalog)).toThrow(/agent "counter" tools/)
  })

  it('with ENABLED_AGENTS unset, still refuses a broken definition and a needed delegate', () => {
    const broken = [
      defineAgent({ name: 'default', ...base }),
      defineAgent({ name: 'counter', ...base, tools: ['counter'], temperature: 3 }),
    ]
    expect(() => resolveAgentSet([], limits, broken)).toThrow(/agent "counter" tools.*temperature/)
    const delegated = [
      defineAgent({ name: 'default', ...base, delegates: ['helper'] }),
      defineAgent({ name: 'helper', ...base, tools: ['counter'] }),
    ]
    expect(() => resolveAgentSet([], limits, delegated)).toThrow(/agent "helper" tools/)
  })

  it('a tool named final_answer is refused: it would collide with the finish tool', () => {
    const offering = { ...limits, enabledTools: ['calculator', 'final_answer'] }
    const problems = (agents: ReturnType<typeof defineAgent>[]) => {
      try {
        resolveAgents([], offering, agents)
        return []
      } catch (err) {
        return (err as { problems: { agent: string; field: string; message: string }[] }).problems
      }
    }
    const collision = expect.stringMatching(/^final_answer is the name of the kernel's finish tool/)
    // The default agent takes the deployment's tools; a named agent only what it lists.
    expect(
      problems([
        defineAgent({ name: 'default', ...base }),
        defineAgent({ name: 'calc', ...base, tools: ['calculator'] }),
        defineAgent({ name: 'finisher', ...base, tools: ['final_answer'] }),
      ]),
    ).toEqual([
      { agent: 'default', field: 'tools', message: collision },
      { agent: 'finisher', field: 'tools', message: collision },
    ])
  })

  it('a channel two agents claim is a problem of the second', () => {
    const problems = problemsOf([
      defineAgent({ name: 'a', ...base, slack: { channels: ['C1AAA'] } }),
      defineAgent({ name: 'b', ...base, slack: { channels: ['C1AAA'] } }),
    ])
    expect(problems).toEqual([
      { agent: 'b', field: 'slack.channels', message: expect.stringContaining('agent "a"') },
    ])
  })
})
