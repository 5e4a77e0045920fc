import { describe, expect, it } from 'vitest'
import { api } from './harness'

describe('GET /openapi.json', () => {
  it('lists every route and the request schemas that validate them', async () => {
    const res = await api('/openapi.json')
    expect(res.status).toBe(200)
    const doc = (await res.json()) as {
      openapi: string
      paths: Record<string, Record<string, { requestBody?: unknown }>>
      components: {
        schemas: Record<
          string,
          {
            properties?: Record<string, unknown>
            required?: string[]
            additionalProperties?: unknown
          }
        >
      }
    }
    expect(doc.openapi).toBe('3.1.0')
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        '/healthz',
        '/v1/runs',
        '/v1/runs/{id}',
        '/v1/runs/{id}/trace',
        '/v1/runs/{id}/approvals/{callId}',
        '/v1/runs/{id}/cancel',
        '/v1/runs/{id}/observations/{handle}',
        '/console',
      ]),
    )
    expect(doc.paths['/v1/runs']!.post!.requestBody).toMatchObject({
      content: { 'application/json': { schema: { $ref: '#/components/schemas/CreateRun' } } },
    })
    const create = doc.components.schemas.CreateRun!
    expect(create.required).toEqual(['task'])
    expect(Object.keys(create.properties!)).toEqual(
      expect.arrayContaining([
        'task',
        'tools',
        'budget',
        'protocol',
        'confirm',
        'model',
        'callback_url',
        'metadata',
      ]),
    )
    // Strict objects: unknown fields are refused, and the document says so.
    expect(create.additionalProperties).toBe(false)
    const decision = doc.components.schemas.Decision!
    expect(decision.required).toEqual(expect.arrayContaining(['decision', 'args_hash']))
    expect(decision.properties!.decision).toMatchObject({ enum: ['approve', 'deny'] })
    // The budget is described inline in CreateRun (a separate component would be unused).
    expect(
      (create.properties!.budget as { properties: Record<string, unknown> }).properties,
    ).toHaveProperty('approvalTtlSeconds')
  })
})

describe('GET /healthz', () => {
  it('answers without authentication', async () => {
    const res = await api('/healthz')
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ ok: true, service: 'edgeloop' })
  })
})
