/**
 * /openapi.json describes the API as it answers: every operation has an id and
 * its responses; every error code a route throws is in its enum; and real responses parse with
 * the schemas the document is made from.
 */
import { describe, expect, it } from 'vitest'
import * as z from 'zod/mini'
import { ROUTE_ERRORS } from '../../src/routes/openapi/openapi-errors'
import { app } from '../../src/routes/app'
import {
  ApprovalPage,
  Cancelling,
  DecisionResult,
  Health,
  Me,
  Misconfigured,
  Ready,
  RunApprovals,
  RunEvent,
  RunPage,
  RunResult,
  RunView,
} from '../../src/api/response-schemas'
import { reply } from '../fakes/fake-openai'
import { readSse } from '../events/sse'
import {
  api,
  AUTH,
  decide,
  drainAlarms,
  getRun,
  ORIGIN,
  postJson,
  RECEIVER,
  startRun,
  useServiceFakes,
} from '../service/harness'
import { fetchWith } from '../service/worker-with'

const fakes = useServiceFakes()

type Operation = {
  operationId?: string
  security?: Record<string, string[]>[]
  responses: Record<string, { content?: Record<string, { schema: any }> }>
}
type Doc = {
  servers: { url: string }[]
  security: Record<string, string[]>[]
  paths: Record<string, Record<string, Operation>>
  components: { schemas: Record<string, unknown>; securitySchemes: Record<string, unknown> }
}

async function document(): Promise<Doc> {
  const res = await api('/openapi.json')
  expect(res.status).toBe(200)
  return (await res.json()) as Doc
}

const operations = (doc: Doc) =>
  Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => ({ path, method, op })),
  )

const codesOf = (op: Operation) =>
  Object.entries(op.responses)
    .filter(([status]) => Number(status) >= 400)
    .flatMap(
      ([, r]) => r.content!['application/json']!.schema.properties.error.properties.code.enum,
    )

// Every module of the HTTP layer, as text, to find the codes it throws.
const routeSources = import.meta.glob(['/src/routes/**/*.ts', '!/src/routes/slack/**'], {
  query: '?raw',
  import: 'default',
  eager: true,
}) as Record<string, string>

describe('/openapi.json', () => {
  it('names the server it was fetched from, and an operationId for every operation', async () => {
    const doc = await document()
    expect(doc.servers).toEqual([{ url: ORIGIN, description: 'This deployment' }])
    const ids = operations(doc).map(({ op }) => op.operationId)
    expect(ids.every((id) => typeof id === 'string' && id.length > 0)).toBe(true)
    expect(new Set(ids).size).toBe(ids.length)
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        '/v1/runs',
        '/v1/runs/{id}',
        '/v1/runs/{id}/trace',
        '/v1/runs/{id}/events',
        '/v1/runs/{id}/approvals/{callId}',
        '/v1/runs/{id}/cancel',
        '/v1/approvals',
        '/v1/me',
      ]),
    )
  })

  it("gives the deployment's budget maxima and the agent-name pattern the server enforces", async () => {
    const res = await fetchWith({ MAX_STEPS: '12' }, '/openapi.json')
    type Body = {
      $ref?: string
      properties: {
        budget: { properties: Record<string, { maximum?: number }> }
        agent: { pattern?: string }
      }
    }
    type Op = { requestBody: { content: Record<string, { schema: Body }> } }
    const doc = (await res.json()) as {
      paths: Record<string, Record<string, Op>>
      components: { schemas: Record<string, Body> }
    }
    const inline = doc.paths['/v1/runs']!.post!.requestBody.content['application/json']!.schema
    const body = inline.$ref ? doc.components.schemas[inline.$ref.split('/').at(-1)!]! : inline
    expect(body.properties.budget.properties.maxSteps!.maximum).toBe(12)
    expect(body.properties.agent.pattern).toBe('^[a-z][a-z0-9_-]{0,39}$')
    const over = await fetchWith({ MAX_STEPS: '12' }, '/v1/runs', {
      method: 'POST',
      headers: { authorization: 'Bearer test-token', 'content-type': 'application/json' },
      body: JSON.stringify({ task: 'x', budget: { maxSteps: 13 } }),
    })
    expect(over.status).toBe(400)
    expect(await over.json()).toMatchObject({ error: { code: 'budget_over_maximum' } })
  })

  it('documents every route the app answers, and nothing else', async () => {
    const doc = await document()
    // The app's own route table (middleware is ALL or `*`), `:id` written as `{id}`.
    const routes = app.routes
      .filter((r) => r.method !== 'ALL' && !r.path.includes('*'))
      .map((r) => `${r.method.toLowerCase()} ${r.path.replace(/:(\w+)/g, '{$1}')}`)
    const documented = operations(doc).map(({ path, method }) => `${method} ${path}`)
    expect(routes).toEqual(expect.arrayContaining(['get /readyz', 'get /healthz']))
    expect([...new Set(routes)].sort()).toEqual([...documented].sort())
  })

  it('/healthz takes `deep` and may answer 503; /readyz answers Ready or 503', async () => {
    const doc = await document()
    const misconfigured = {
      anyOf: [
        { $ref: '#/components/schemas/Misconfigured' },
        { $ref: '#/components/schemas/MisconfiguredSummary' },
      ],
    }
    const health = doc.paths['/healthz']!.get! as Operation & { parameters: unknown[] }
    expect(health.parameters).toEqual([
      expect.objectContaining({ name: 'deep', in: 'query', required: false }),
    ])
    expect(health.responses['200']!.content!['application/json']!.schema).toEqual({
      oneOf: [{ $ref: '#/components/schemas/Health' }, { $ref: '#/components/schemas/Ready' }],
    })
    expect(health.responses['503']!.content!['application/json']!.schema).toEqual(misconfigured)
    const ready = doc.paths['/readyz']!.get!
    // No token: the summary; a token: it needs service:read for the full report.
    expect(ready.security).toEqual([{}, { bearer: [] }])
    expect(Object.keys(ready.responses).sort()).toEqual(['200', '401', '403', '503'])
    expect(ready.responses['200']!.content!['application/json']!.schema).toEqual({
      $ref: '#/components/schemas/Ready',
    })
    expect(ready.responses['503']!.content!['application/json']!.schema).toEqual(misconfigured)
  })

  it('offers the webhook signature only on POST /v1/runs', async () => {
    const doc = await document()
    for (const { path, method, op } of operations(doc)) {
      const schemes = (op.security ?? doc.security).flatMap((s) => Object.keys(s))
      if (path === '/v1/runs' && method === 'post') {
        expect(op.security).toEqual([
          { bearer: [] },
          { webhookSignature: [], webhookTimestamp: [] },
        ])
      } else if (path.startsWith('/v1/')) {
        expect(op.security, `${method} ${path}`).toEqual([{ bearer: [] }])
      } else if (path === '/mcp') {
        // The agents as an MCP server take the API's bearer tokens (docs/serving.md); its CORS
        // preflight takes none.
        expect(op.security, `${method} ${path}`).toEqual(
          method === 'options' ? [] : [{ bearer: [] }],
        )
      } else if (path === '/a2a') {
        // A2A takes an API token as its bearer token (docs/serving.md#a2a).
        expect(op.security, `${method} ${path}`).toEqual([{ bearer: [] }])
      } else if (path === '/readyz' || path === '/healthz') {
        expect(op.security, `${method} ${path}`).toEqual([{}, { bearer: [] }])
      } else {
        expect(schemes, `${method} ${path}`).not.toContain('bearer')
      }
    }
  })

  it('gives every /v1 success response a schema', async () => {
    const doc = await document()
    for (const { path, method, op } of operations(doc)) {
      if (!path.startsWith('/v1/')) continue
      for (const [status, response] of Object.entries(op.responses)) {
        const content = response.content ?? {}
        expect(Object.keys(content).length, `${method} ${path} ${status}`).toBeGreaterThan(0)
      }
    }
    for (const name of ['RunView', 'RunResult', 'RunPage', 'ApprovalPage', 'RunEvent']) {
      expect(doc.components.schemas[name], name).toBeDefined()
    }
  })

  it('lists every error code the HTTP layer throws', async () => {
    const doc = await document()
    const documented = new Set(
      operations(doc).flatMap(({ path, op }) => (path.startsWith('/v1') ? codesOf(op) : [])),
    )
    const thrown = new Set<string>()
    for (const source of Object.values(routeSources)) {
      for (const m of source.matchAll(/new ApiError\(\s*\d{3},\s*'([a-z_]+)'/g)) thrown.add(m[1]!)
    }
    // Codes the DO answers and the routes pass on (runs.ts maps only no_run and not_found).
    for (const code of [
      'already_decided',
      'hash_mismatch',
      'not_pending',
      'run_finished',
      'run_cancelling',
    ]) {
      thrown.add(code)
    }
    // `not_found` is the unknown-route answer, not an operation's.
    thrown.delete('not_found')
    expect([...thrown].filter((c) => !documented.has(c))).toEqual([])
  })
})

/** Parses `body` with `schema`, failing with zod's issues. */
function conforms(schema: z.ZodMiniType, body: unknown) {
  const parsed = z.safeParse(schema, body)
  expect(parsed.success, JSON.stringify(parsed.error?.issues)).toBe(true)
}

async function errorCode(res: Response) {
  return ((await res.json()) as { error: { code: string } }).error.code
}

describe('real responses match the documented schemas', () => {
  it('run, trace, events, list pages, me, decision and cancel', async () => {
    fakes.ai.enqueue(
      reply.toolCalls([
        {
          id: 'call_post',
          name: 'http_post',
          arguments: { url: `https://${RECEIVER}/x`, body: {} },
        },
      ]),
      reply.text('Posted.'),
    )
    const id = await startRun({ task: 'Post', tools: ['http_post'], metadata: { k: 'v' } })
    await drainAlarms(id)
    const view = await getRun(id)
    conforms(RunView, view)
    conforms(ApprovalPage, await (await api('/v1/approvals', { headers: AUTH })).json())
    const pending = view.pendingApprovals[0]!
    const decided = await decide(id, pending.callId, {
      decision: 'approve',
      args_hash: pending.argsHash,
    })
    conforms(DecisionResult, await decided.json())
    await drainAlarms(id)
    conforms(RunView, await getRun(id))
    conforms(RunResult, await (await api(`/v1/runs/${id}/trace`, { headers: AUTH })).json())
    conforms(RunPage, await (await api('/v1/runs?limit=5', { headers: AUTH })).json())
    conforms(Me, await (await api('/v1/me', { headers: AUTH })).json())
    conforms(RunApprovals, await (await api(`/v1/runs/${id}/approvals`, { headers: AUTH })).json())
    const events = await readSse(await api(`/v1/runs/${id}/events`, { headers: AUTH })).toEnd()
    expect(events.length).toBeGreaterThan(5)
    for (const event of events) conforms(RunEvent, event)

    fakes.ai.enqueue(reply.hang())
    const other = await startRun({ task: 'Wait', tools: ['calculator'] })
    const cancel = await postJson(`/v1/runs/${other}/cancel`, {})
    expect(cancel.status).toBe(202)
    conforms(Cancelling, await cancel.json())
  })

  it.each(['/healthz?deep=1', '/healthz?deep', '/healthz?deep=0', '/readyz'])(
    '%s: Ready when every setting is good, 503 Misconfigured when one is not',
    async (path) => {
      const ready = await api(path, { headers: AUTH })
      expect(ready.status).toBe(200)
      conforms(Ready, await ready.json())
      const bad = await fetchWith({ CONFIRM_POLICY: 'bogus', MAX_STEPS: 'many' }, path, {
        headers: AUTH,
      })
      expect(bad.status).toBe(503)
      const body = await bad.json()
      conforms(Misconfigured, body)
      expect(
        (body as { error: { details: { problems: unknown[] } } }).error.details.problems,
      ).toHaveLength(2)
    },
  )

  it('/healthz without deep: Health, whatever the settings', async () => {
    const res = await fetchWith({ CONFIRM_POLICY: 'bogus' }, '/healthz')
    expect(res.status).toBe(200)
    conforms(Health, await res.json())
  })

  it.each([
    ['getRun', () => api(`/v1/runs/run_${'0'.repeat(32)}`, { headers: AUTH }), 404],
    ['listRuns', () => api('/v1/runs?status=nope', { headers: AUTH }), 400],
    [
      'streamEvents',
      () => api(`/v1/runs/run_${'0'.repeat(32)}/events?after=x`, { headers: AUTH }),
      400,
    ],
    ['createRun', () => postJson('/v1/runs', { task: 'x', tools: ['nope'] }), 400],
    ['listApprovals', () => api('/v1/approvals'), 401],
    ['whoAmI', () => api('/v1/me', { headers: { authorization: 'Bearer wrong' } }), 401],
  ] as const)('%s answers a documented code for its status', async (route, send, status) => {
    const res = await send()
    expect(res.status).toBe(status)
    const codes = (ROUTE_ERRORS[route] as Record<number, string[]>)[status]!
    expect(codes).toContain(await errorCode(res))
  })
})
