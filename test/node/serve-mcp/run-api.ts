/** The HTTP API of an `/mcp` test Worker: reading runs and deciding their approvals as a person. */
import { expect } from 'vitest'
import type { McpWorker } from './mcp-worker.ts'

export function runApi(worker: () => McpWorker) {
  /** `path` of the API as `token`: GET, or POST of `body`; the answer must be a 2xx. */
  async function api(path: string, token: string, body?: unknown): Promise<any> {
    const res = await worker().runtime.fetch(path, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
    const json = await res.json()
    expect(res.ok, `${path}: ${res.status} ${JSON.stringify(json)}`).toBe(true)
    return json
  }

  /** Approves the run's one pending approval through the API, once it is there. */
  async function approveWhenAsked(runId: string, token: string): Promise<void> {
    for (let i = 0; i < 300; i++) {
      const view = await api(`/v1/runs/${runId}`, token)
      const pending = view.pendingApprovals[0]
      if (pending) {
        await api(`/v1/runs/${runId}/approvals/${pending.callId}`, token, {
          decision: 'approve',
          args_hash: pending.argsHash,
        })
        return
      }
      await new Promise((r) => setTimeout(r, 100))
    }
    throw new Error(`run ${runId} never asked for an approval`)
  }

  return { api, approveWhenAsked }
}
