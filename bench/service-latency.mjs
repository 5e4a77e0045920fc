// Latency of `POST /v1/runs` and of an approval request against wrangler dev on 127.0.0.1, with
// the offline demo model (each run reaches its rollback approval after four scripted steps).
import { percentiles } from './wrangler-dev.mjs'

const TASK = 'The order service 5xx rate jumped from 0.1% to 12%. Find the root cause and fix it.'

export async function benchServiceLatency(baseUrl, token, n = 50) {
  const headers = { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }
  const startMs = []
  const ids = []
  for (let i = 0; i < n; i++) {
    const t0 = performance.now()
    const res = await fetch(`${baseUrl}/v1/runs`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ task: TASK }),
    })
    const body = await res.json()
    startMs.push(performance.now() - t0)
    if (res.status !== 202)
      throw new Error(`POST /v1/runs answered ${res.status}: ${JSON.stringify(body)}`)
    ids.push(body.id)
  }
  // Wait (bounded) until every run is waiting for its approval.
  const pending = new Map()
  const deadline = Date.now() + 60_000
  while (pending.size < ids.length && Date.now() < deadline) {
    for (const id of ids) {
      if (pending.has(id)) continue
      const view = await (await fetch(`${baseUrl}/v1/runs/${id}`, { headers })).json()
      if (view.pendingApprovals?.length) pending.set(id, view.pendingApprovals[0])
    }
    if (pending.size < ids.length) await new Promise((r) => setTimeout(r, 200))
  }
  const approveMs = []
  for (const [id, approval] of pending) {
    const t0 = performance.now()
    const res = await fetch(`${baseUrl}/v1/runs/${id}/approvals/${approval.callId}`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ decision: 'approve', argsHash: approval.argsHash }),
    })
    await res.arrayBuffer()
    approveMs.push(performance.now() - t0)
    if (res.status !== 200) throw new Error(`approval answered ${res.status}`)
  }
  const f = (p) => `median ${p.median.toFixed(1)} ms, p99 ${p.p99.toFixed(1)} ms (n=${p.n})`
  return [
    'service latency against wrangler dev on 127.0.0.1 (offline demo model)',
    `  POST /v1/runs:              ${f(percentiles(startMs))}`,
    `  POST approvals/:callId:     ${f(percentiles(approveMs))}`,
  ].join('\n')
}
