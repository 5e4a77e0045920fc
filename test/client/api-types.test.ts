/**
 * The installable client against the document the service serves: its types are generated from
 * GET /openapi.json (scripts/openapi-types.mjs), and every request it makes is a documented
 * operation. Either failing means the client and the service disagree.
 */
import { exports } from 'cloudflare:workers'
import { describe, expect, it } from 'vitest'
import { openApiTypes } from '../../scripts/openapi-types.mjs'
import committed from '../../src/client/api-types.ts?raw'
import { EdgeloopClient } from '../../src/client'
import { API_TOKEN, ORIGIN } from '../service/harness'

type Operations = Record<string, Record<string, unknown>>

interface Schema {
  $ref?: string
  type?: unknown
  oneOf?: Schema[]
  anyOf?: Schema[]
}
type Content = { content?: Record<string, { schema?: Schema }> }
interface ServedDocument {
  components: { schemas: Record<string, Schema> }
  paths: Record<
    string,
    Record<string, { requestBody?: Content; responses?: Record<string, Content> }>
  >
}

/** A schema as text with its keys sorted, for recognising an inlined copy of a component. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`
  if (value && typeof value === 'object') {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`
  }
  return JSON.stringify(value)
}

async function servedDocument(): Promise<{ paths: Operations }> {
  const res = await exports.default.fetch(`${ORIGIN}/openapi.json`)
  expect(res.status).toBe(200)
  return res.json()
}

/** `GET /v1/runs/{id}` → a pattern matching `GET /v1/runs/run_…`. */
function operationPatterns(paths: Operations): RegExp[] {
  return Object.entries(paths).flatMap(([path, operations]) =>
    Object.keys(operations).map((method) => {
      const literal = path
        .split(/\{[^}]+\}/)
        .map((part) => part.replace(/[.*+?^$()|[\]\\]/g, '\\$&'))
      return new RegExp(`^${method.toUpperCase()} ${literal.join('[^/]+')}$`)
    }),
  )
}

describe('the client and /openapi.json', () => {
  it('has the types generated from the served document', async () => {
    const generated = openApiTypes(await servedDocument())
    // On failure: `npm run client:types` rewrites src/client/api-types.ts from the routes' schemas.
    expect(committed, 'src/client/api-types.ts is stale: run `npm run client:types`').toBe(
      generated,
    )
  })

  it('has a type for every JSON body an operation takes or answers (JSON-RPC ones too)', async () => {
    const doc = (await servedDocument()) as unknown as ServedDocument
    const components = new Set(Object.values(doc.components.schemas).map(canonical))
    // Named: a component (by reference, or an inlined copy the generator names), or a choice of
    // named ones. Opaque: an object the document says nothing more of (e.g. the agent card).
    const named = (s: Schema): boolean =>
      typeof s.$ref === 'string' ||
      components.has(canonical(s)) ||
      ((s.oneOf ?? s.anyOf ?? []).length > 0 && (s.oneOf ?? s.anyOf)!.every(named))
    const opaque = (s: Schema) =>
      s.type === 'object' && Object.keys(s).every((k) => k === 'type' || k === 'description')
    const untyped: string[] = []
    for (const [path, operations] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(operations)) {
        const bodies = [
          ['request', op.requestBody?.content?.['application/json']?.schema],
          ...Object.entries(op.responses ?? {})
            .filter(([status]) => status.startsWith('2'))
            .map(([status, r]) => [status, r.content?.['application/json']?.schema] as const),
        ] as const
        for (const [which, schema] of bodies) {
          if (schema && !named(schema) && !opaque(schema))
            untyped.push(`${method} ${path} ${which}`)
        }
      }
    }
    expect(untyped).toEqual([])
    // /mcp's messages are named components, so the generated file declares them.
    const mcp = doc.paths['/mcp']!.post!
    expect(mcp.requestBody?.content?.['application/json']?.schema).toEqual({
      $ref: '#/components/schemas/McpMessage',
    })
    for (const name of ['McpMessage', 'McpRequest', 'McpResponse'])
      expect(committed).toMatch(new RegExp(`^export (interface|type) ${name}\\b`, 'm'))
  })

  it('sends only documented operations, from every method', async () => {
    const sent: string[] = []
    const client = new EdgeloopClient({
      baseUrl: ORIGIN,
      token: API_TOKEN,
      fetch: (request) => {
        sent.push(`${request.method} ${new URL(request.url).pathname}`)
        return exports.default.fetch(request)
      },
    })
    const id = `run_${'0'.repeat(32)}`
    // One call per public method; a new method must be added here (checked below).
    const calls: Record<string, () => Promise<unknown>> = {
      startRun: () => client.startRun({ task: '' }),
      me: () => client.me(),
      listAgents: () => client.listAgents(),
      getAgent: () => client.getAgent('triage'),
      getRun: () => client.getRun(id),
      trace: () => client.trace(id),
      readObservation: () => client.readObservation(id, 'obs_1'),
      listRuns: () => client.listRuns({ status: 'running' }),
      listChildren: () => client.listChildren(id),
      runApprovals: () => client.runApprovals(id),
      listApprovals: () => client.listApprovals(),
      decide: () => client.decide(id, 'call_1', { decision: 'deny', argsHash: '0'.repeat(64) }),
      cancel: () => client.cancel(id),
      deleteRun: () => client.deleteRun(id),
      exportRun: () => client.exportRun(id),
      events: () => client.events(id).next(),
      runListChanges: async () => {
        const stop = new AbortController()
        const changes = client.runListChanges({ signal: stop.signal })
        await changes.next()
        stop.abort()
        await changes.return(undefined)
      },
    }
    const methods = Object.getOwnPropertyNames(EdgeloopClient.prototype).filter(
      (name) => name !== 'constructor',
    )
    expect(Object.keys(calls).sort()).toEqual(methods.sort())

    for (const call of Object.values(calls)) await call().catch(() => undefined)
    expect(sent).toHaveLength(methods.length)
    const patterns = operationPatterns((await servedDocument()).paths)
    const undocumented = sent.filter((line) => !patterns.some((p) => p.test(line)))
    expect(undocumented).toEqual([])
  })
})
