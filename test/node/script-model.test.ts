/**
 * MODEL=script as docs/trying-tools.md shows it: the service started as `npm start` starts it
 * (wrangler dev), one POST of a scripted task, the side effect waiting for approval, the
 * approval, the run finishing: real HTTP, as curl would send it.
 */
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startWranglerDev } from '../../bench/wrangler-dev.mjs'
import { wranglerConfigWithoutDevVars } from '../../scripts/test-wrangler-config.mjs'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..')
const TOKEN = 'script-model-token'

describe('MODEL=script under wrangler dev', () => {
  let dev: Awaited<ReturnType<typeof startWranglerDev>>

  beforeAll(async () => {
    dev = await startWranglerDev(
      ROOT,
      {
        API_TOKEN: TOKEN,
        API_TOKENS: '',
        MODEL: 'script',
        OPENAI_API_KEY: '',
        // The demo's pretend rollback: a side effect that changes nothing, so it needs approval.
        ENABLED_TOOLS: 'calculator,rollback_deploy',
      },
      { config: wranglerConfigWithoutDevVars() },
    )
  }, 120_000)

  afterAll(() => dev?.stop())

  const call = async (path: string, body?: unknown) => {
    const res = await fetch(`${dev.baseUrl}${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
    const json = (await res.json()) as any
    expect(res.ok, `${path}: ${res.status} ${JSON.stringify(json)}`).toBe(true)
    return json
  }
  const until = async (id: string, status: string) => {
    for (let i = 0; i < 200; i++) {
      const view = await call(`/v1/runs/${id}`)
      if (view.status === status) return view
      await new Promise((r) => setTimeout(r, 100))
    }
    throw new Error(`run ${id} never reached ${status}`)
  }

  it('runs a scripted task to its approval, and to its end once approved', async () => {
    const task =
      'call calculator with {"expression": "12 * 7"}, then call `rollback_deploy` with ' +
      '{"service": "order", "to_version": "v2.13.2", "reason": "trying the approval"}, ' +
      'then finish with Rolled back.'
    const { id } = await call('/v1/runs', { task })
    const waiting = await until(id, 'awaiting_approval')
    const [pending] = waiting.pendingApprovals
    expect(pending).toMatchObject({ tool: 'rollback_deploy', args: { service: 'order' } })

    await call(`/v1/runs/${id}/approvals/${pending.callId}`, {
      decision: 'approve',
      args_hash: pending.argsHash,
    })
    await until(id, 'succeeded')
    const trace = await call(`/v1/runs/${id}/trace`)
    expect(trace).toMatchObject({ ok: true, answer: 'Rolled back.', model: 'script' })
    const calls = trace.steps.flatMap((s: any) => s.calls)
    expect(calls.map((c: any) => c.name)).toEqual(['calculator', 'rollback_deploy'])
    expect(calls[0].observation).toContain('84')
    expect(calls[1].approval).toMatchObject({ decision: 'approved', decidedBy: 'api' })
  }, 60_000)
})
