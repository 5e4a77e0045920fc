/**
 * The demo only when asked for, and every setting checked at once: /healthz is
 * liveness, /healthz?deep=1 and /readyz list every configuration problem, a run blocked by a bad
 * setting says so in GET /v1/runs/:id.
 */
import { env } from 'cloudflare:workers'
import { runInDurableObject } from 'cloudflare:test'
import { describe, expect, it } from 'vitest'
import {
  api,
  AUTH,
  getRun,
  JSON_AUTH,
  runAlarm,
  startRun,
  stubOf,
  useServiceFakes,
} from './harness'
import { fetchWith } from './worker-with'
import { AGENT_CATALOG } from '../../agents/index'

useServiceFakes()

type Report = {
  ok?: boolean
  warnings?: string[]
  error?: { code: string; message: string; details: { problems: { variable: string }[] } }
}

const start = (settings: Record<string, string | undefined>) =>
  fetchWith(settings, '/v1/runs', {
    method: 'POST',
    headers: JSON_AUTH,
    body: JSON.stringify({ task: 'Add 2 and 3', tools: ['calculator'] }),
  })

/**
 * A warning for each agent of the catalog that GET /v1/agents leaves out under these settings,
 * and the shipped demo agents among them without MODEL=demo. Computed from the catalog, so an
 * agent a person adds (agents/catalog.ts) before enabling its tool is one more warning, not a
 * broken test (docs/agents.md#adding-an-agent).
 */
async function leftOutWarnings(settings: Record<string, string | undefined>) {
  const res = await fetchWith(settings, '/v1/agents', { headers: AUTH })
  const offered = new Set(
    ((await res.json()) as { agents: { name: string }[] }).agents.map((a) => a.name),
  )
  const missing = AGENT_CATALOG.map((a) => String(a.name)).filter((n) => !offered.has(n))
  if (settings.MODEL !== 'demo')
    expect(missing).toEqual(expect.arrayContaining(['oncall', 'log_analyst']))
  else expect(missing).not.toContain('oncall')
  return missing.map((name) => expect.stringContaining(`agent "${name}" is not offered`))
}

describe('/healthz and /readyz', () => {
  it('/healthz is liveness, whatever the settings', async () => {
    const res = await fetchWith({ CONFIRM_POLICY: 'bogus' }, '/healthz')
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ ok: true, service: 'edgeloop' })
  })

  it.each(['/healthz?deep=1', '/readyz'])(
    '%s: ready, with a warning for the demo tools beside a real model',
    async (path) => {
      const res = await api(path, { headers: AUTH })
      expect(res.status).toBe(200)
      const body = (await res.json()) as Report
      expect(body.ok).toBe(true)
      expect(body.warnings).toEqual([
        expect.stringContaining('rollback_deploy'),
        ...(await leftOutWarnings({})),
      ])
    },
  )

  it('lists every bad setting at once (503 misconfigured)', async () => {
    const res = await fetchWith(
      {
        CONFIRM_POLICY: 'bogus',
        MAX_STEPS: 'many',
        CALLBACK_ALLOWLIST: 'hooks.test/path',
        API_TOKENS: '{"not":"a list"}',
        SLACK_APPROVERS: 'bob',
        API_APPROVES_SLACK_RUNS: 'maybe',
      },
      // No token: with API_TOKENS broken, none authenticates; the summary names the variables.
      '/readyz',
    )
    expect(res.status).toBe(503)
    const body = (await res.json()) as { error: { code: string; details: { variables: string[] } } }
    expect(body.error.code).toBe('misconfigured')
    expect(body.error.details.variables.sort()).toEqual([
      'API_APPROVES_SLACK_RUNS',
      'API_TOKENS',
      'CALLBACK_ALLOWLIST',
      'CONFIRM_POLICY',
      'MAX_STEPS',
      'SLACK_APPROVERS',
    ])
  })

  it('lists a bad MCP_SERVERS entry and what is wrong with it', async () => {
    const res = await fetchWith(
      {
        MCP_SERVERS: JSON.stringify([
          { name: 'docs', url: 'https://docs.test/mcp', token_secret: 'DOCS_MCP_TOKEN' },
          {
            name: 'tracker',
            url: 'https://tracker.test/mcp',
            overrides: { x: { sideEffect: false } },
          },
        ]),
        MAX_STEPS: 'many',
      },
      '/healthz?deep=1',
      { headers: AUTH },
    )
    expect(res.status).toBe(503)
    const body = (await res.json()) as Report
    expect(body.error!.details.problems).toEqual(
      expect.arrayContaining([
        {
          variable: 'MCP_SERVERS',
          message: expect.stringMatching(
            /^MCP_SERVERS entry 1 \("tracker"\): overrides\.x: an override can only make a tool stricter: \{"sideEffect": true\} and\/or \{"idempotent": false\}/,
          ),
        },
        expect.objectContaining({ variable: 'MAX_STEPS' }),
      ]),
    )
  })

  it('names the secret an MCP server’s token_secret names when it is not set', async () => {
    const res = await fetchWith(
      {
        MCP_SERVERS: JSON.stringify([
          { name: 'github', url: 'https://gh.test/mcp', token_secret: 'GITHUB_MCP_TOKEN' },
        ]),
      },
      '/readyz',
      { headers: AUTH },
    )
    expect(res.status).toBe(503)
    const body = (await res.json()) as Report
    expect(body.error!.details.problems).toEqual([
      {
        variable: 'GITHUB_MCP_TOKEN',
        message:
          'MCP_SERVERS server "github" names token_secret GITHUB_MCP_TOKEN, which is not set; ' +
          'set it with `wrangler secret put GITHUB_MCP_TOKEN` (or in .dev.vars)',
      },
    ])
  })

  it('CONFIRM_ALLOWLIST names must be enabled tools', async () => {
    const res = await fetchWith(
      { CONFIRM_POLICY: 'allowlist', CONFIRM_ALLOWLIST: 'http_post,deploy_prod' },
      '/healthz?deep=1',
      { headers: AUTH },
    )
    expect(res.status).toBe(503)
    const body = (await res.json()) as Report
    expect(body.error!.details.problems).toEqual([
      expect.objectContaining({ variable: 'CONFIRM_ALLOWLIST' }),
    ])
    expect(body.error!.message).toContain('deploy_prod')
  })
})

describe('the demo only when asked for', () => {
  it('no key and a real model: 503 naming OPENAI_API_KEY (no quiet demo)', async () => {
    const res = await start({ OPENAI_API_KEY: undefined })
    expect(res.status).toBe(503)
    const body = (await res.json()) as Report
    expect(body.error!.code).toBe('misconfigured')
    expect(body.error!.message).toContain('OPENAI_API_KEY')
    expect(body.error!.message).toContain('MODEL=demo')
  })

  it.each([
    ['MODEL=demo with no key', { OPENAI_API_KEY: undefined, MODEL: 'demo', MODEL_ALLOWLIST: '' }],
    ['a keyless provider, OPENAI_API_KEY=none', { OPENAI_API_KEY: 'none' }],
  ])('%s starts runs', async (_label, settings) => {
    expect((await start(settings)).status).toBe(202)
  })

  it('the demo tools are the default only with MODEL=demo', async () => {
    const real = await fetchWith({ ENABLED_TOOLS: undefined }, '/readyz', { headers: AUTH })
    expect(((await real.json()) as Report).warnings).toEqual(
      await leftOutWarnings({ ENABLED_TOOLS: undefined }),
    )
    const demoSettings = {
      ENABLED_TOOLS: undefined,
      MODEL: 'demo',
      OPENAI_API_KEY: undefined,
      MODEL_ALLOWLIST: '',
    }
    const demo = await fetchWith(demoSettings, '/readyz', { headers: AUTH })
    expect(((await demo.json()) as Report).warnings).toEqual([
      expect.stringContaining('MODEL=demo'),
      ...(await leftOutWarnings(demoSettings)),
    ])
    const rollback = await fetchWith({ ENABLED_TOOLS: undefined }, '/v1/runs', {
      method: 'POST',
      headers: JSON_AUTH,
      body: JSON.stringify({ task: 'x', tools: ['rollback_deploy'] }),
    })
    expect(rollback.status).toBe(400)
    expect(await rollback.json()).toMatchObject({ error: { code: 'unknown_tools' } })
  })
})

describe('a run blocked by a bad setting', () => {
  it('shows why in GET /v1/runs/:id, and goes on once the setting is fixed', async () => {
    const id = await startRun({ task: 'Add 2 and 3', tools: ['calculator'] })
    // A redeploy with a bad setting, as the run's object sees it.
    await runInDurableObject(stubOf(id), (instance) => {
      ;(instance as unknown as { env: unknown }).env = { ...env, CONFIRM_POLICY: 'bogus' }
    })
    await runAlarm(id)
    const view = await getRun(id)
    expect(view.status).toBe('running')
    expect(view.blocked).toMatchObject({ code: 'misconfigured', variable: 'CONFIRM_POLICY' })
    expect(view.blocked!.message).toContain('CONFIRM_POLICY')
    expect(view.stepCount).toBe(0)
    await runInDurableObject(stubOf(id), (instance) => {
      ;(instance as unknown as { env: unknown }).env = env
    })
  })
})

describe('who sees the readiness report', () => {
  const broken = { CONFIRM_POLICY: 'bogus', MAX_STEPS: 'many', WEBHOOK_SECRET: 'abc12' }

  it.each(['/readyz', '/healthz?deep=1'])(
    '%s without credentials: ready or how many problems, none of their text',
    async (path) => {
      const ready = await fetchWith({}, path)
      expect(ready.status).toBe(200)
      expect(await ready.json()).toEqual({ ok: true, service: 'edgeloop', warnings: [] })
      const bad = await fetchWith(broken, path)
      expect(bad.status).toBe(503)
      const text = await bad.text()
      expect(JSON.parse(text)).toEqual({
        error: {
          code: 'misconfigured',
          message:
            '3 configuration problems (CONFIRM_POLICY, MAX_STEPS, WEBHOOK_SECRET); ' +
            'send a token with the scope service:read to see what is wrong',
          details: {
            problemCount: 3,
            variables: ['CONFIRM_POLICY', 'MAX_STEPS', 'WEBHOOK_SECRET'],
          },
        },
      })
      // Nothing of the values or of the problems' text.
      for (const leak of ['bogus', 'many', 'abc12', 'must']) expect(text).not.toContain(leak)
    },
  )

  it('a token with service:read sees every problem', async () => {
    const res = await fetchWith(broken, '/readyz', { headers: AUTH })
    expect(res.status).toBe(503)
    const body = (await res.json()) as Report
    expect(body.error!.details.problems.map((p) => p.variable).sort()).toEqual([
      'CONFIRM_POLICY',
      'MAX_STEPS',
      'WEBHOOK_SECRET',
    ])
  })

  it('a token without service:read is refused (403), an unknown one 401', async () => {
    const reader = await fetchWith(broken, '/readyz', {
      headers: { authorization: 'Bearer test-reader-token' },
    })
    expect(reader.status).toBe(403)
    expect(await reader.json()).toMatchObject({
      error: { code: 'forbidden', details: { required: 'service:read' } },
    })
    const unknown = await fetchWith(broken, '/readyz', {
      headers: { authorization: 'Bearer not-a-token' },
    })
    expect(unknown.status).toBe(401)
    expect(await unknown.json()).toMatchObject({ error: { code: 'unauthorized' } })
  })
})
