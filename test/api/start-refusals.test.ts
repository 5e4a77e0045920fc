/**
 * A refused start is answered in one place (routes/app.ts): each refusal the start service
 * makes (src/runs/start/) becomes the status its kind maps to, and /openapi.json documents its
 * code under that status for POST /v1/runs.
 */
import { describe, expect, it } from 'vitest'
import { ROUTE_ERRORS } from '../../src/routes/openapi/openapi-errors'
import { START_REFUSAL_STATUS } from '../../src/routes/app'
import type { StartRefusal } from '../../src/runs/start'
import { postJson, useServiceFakes } from '../service/harness'

useServiceFakes()

const startSources = import.meta.glob('/src/runs/start/*.ts', {
  query: '?raw',
  import: 'default',
  eager: true,
}) as Record<string, string>

/** Every `new StartError('<refusal>', '<code>'` written in the start service. */
const refusals = Object.values(startSources).flatMap((source) =>
  [...source.matchAll(/new StartError\(\s*'([a-z_]+)',\s*'([a-z_]+)'/g)].map((m) => ({
    refusal: m[1] as StartRefusal,
    code: m[2]!,
  })),
)

describe('a refused start', () => {
  it('is documented for createRun under the status its kind maps to', () => {
    expect(refusals.length).toBeGreaterThanOrEqual(18)
    const documented = ROUTE_ERRORS.createRun as Record<number, string[]>
    const missing = refusals.filter(
      ({ refusal, code }) => !documented[START_REFUSAL_STATUS[refusal]]?.includes(code),
    )
    expect(missing).toEqual([])
  })

  it.each([
    [{ task: 'x', agent: 'nobody' }, 404, 'agent_not_found'],
    [{ task: 'x', model: 'gpt-nope' }, 400, 'model_not_allowed'],
    [{ task: 'x', continue: 'run_00000000000000000000000000000000' }, 404, 'run_not_found'],
  ])('answers %j with %i %s and the error body', async (body, status, code) => {
    const res = await postJson('/v1/runs', body)
    expect(res.status).toBe(status)
    expect(await res.json()).toMatchObject({ error: { code, message: expect.any(String) } })
  })
})
