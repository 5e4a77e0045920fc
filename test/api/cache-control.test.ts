/**
 * API answers are one token's view of runs, traces and observations: every `/v1` answer says
 * `Cache-Control: no-store`, errors included, while the event stream keeps its own rule and the
 * public routes outside `/v1` are left as they are.
 */
import { describe, expect, it } from 'vitest'
import { api, AUTH, getRun, postJson, startRun, useServiceFakes } from '../service/harness'

useServiceFakes()

describe('Cache-Control on the API', () => {
  it('is no-store on every /v1 answer, success or error', async () => {
    const id = await startRun({ task: 'What is 2 + 2?', tools: [] })
    await getRun(id)
    const answers = [
      await api('/v1/me', { headers: AUTH }),
      await api(`/v1/runs/${id}`, { headers: AUTH }),
      await api(`/v1/runs/${id}/approvals`, { headers: AUTH }),
      await api('/v1/runs?limit=5', { headers: AUTH }),
      await api('/v1/approvals?status=pending', { headers: AUTH }),
      await api('/v1/me'), // 401
      await api('/v1/runs/run_missing', { headers: AUTH }), // 400 or 404
      await postJson('/v1/runs', { task: '' }), // 400
      await api('/v1/me', { method: 'POST', headers: AUTH }), // 405
    ]
    for (const res of answers) {
      expect(res.headers.get('cache-control'), `${res.url} ${res.status}`).toBe('no-store')
      await res.body?.cancel()
    }
    expect(answers.map((r) => r.status)).toContain(401)
    expect(answers.map((r) => r.status)).toContain(405)
  })

  it('leaves the event stream its own rule, and the public routes alone', async () => {
    const id = await startRun({ task: 'What is 2 + 2?', tools: [] })
    const stream = await api(`/v1/runs/${id}/events`, { headers: AUTH })
    expect(stream.headers.get('cache-control')).toBe('no-cache, no-transform')
    await stream.body?.cancel()
    const health = await api('/healthz')
    expect(health.headers.get('cache-control')).toBeNull()
  })
})
