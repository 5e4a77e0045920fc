import type { RunResult } from '../kernel/trace'

/** The Worker as the eval reaches it: its `fetch`, with the token the eval deployment accepts. */
export interface WorkerClient {
  fetch(path: string, init?: RequestInit): Promise<Response>
  token: string
}

/** A pending approval as `GET /v1/runs/:id` shows it, with the run it is decided on. */
export interface PendingCall {
  runId: string
  callId: string
  tool: string
  argsHash: string
}

/** What the eval reads of `GET /v1/runs/:id`. */
export interface RunViewPart {
  id: string
  status: 'running' | 'awaiting_approval' | 'succeeded' | 'failed'
  pendingApprovals: { callId: string; tool: string; argsHash: string }[]
  descendantApprovals: { runId: string; callId: string; tool: string; argsHash: string }[]
  result: RunResult
}

/** A request to the Worker that must succeed; the error names the route and the answer. */
export async function callWorker<T>(
  client: WorkerClient,
  method: string,
  path: string,
  body?: unknown,
): Promise<T> {
  const res = await client.fetch(path, {
    method,
    headers: {
      authorization: `Bearer ${client.token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  const text = await res.text()
  if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${text.slice(0, 500)}`)
  return JSON.parse(text) as T
}

/** Every approval a run and its descendants wait for. */
export function pendingCalls(view: RunViewPart): PendingCall[] {
  return [
    ...view.pendingApprovals.map((p) => ({ ...p, runId: view.id })),
    ...view.descendantApprovals.map((p) => ({
      runId: p.runId,
      callId: p.callId,
      tool: p.tool,
      argsHash: p.argsHash,
    })),
  ]
}
