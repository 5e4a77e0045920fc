import type { ApprovalAnswer } from '../../agents/define-eval'
import {
  callWorker,
  pendingCalls,
  type PendingCall,
  type RunViewPart,
  type WorkerClient,
} from './worker-client'

const POLL_MS = 50

/**
 * Waits for a run (and its child runs) to end, answering each approval it asks with `decide`,
 * the way a person would through the API. Past `timeoutMs` the run is cancelled and this throws.
 */
export async function awaitRun(
  client: WorkerClient,
  runId: string,
  decide: (call: PendingCall) => ApprovalAnswer,
  timeoutMs: number,
): Promise<RunViewPart> {
  const deadline = Date.now() + timeoutMs
  const decided = new Set<string>()
  for (;;) {
    const view = await callWorker<RunViewPart>(client, 'GET', `/v1/runs/${runId}`)
    if (view.status === 'succeeded' || view.status === 'failed') return view
    for (const call of pendingCalls(view)) {
      const key = `${call.runId}/${call.callId}`
      if (decided.has(key)) continue
      decided.add(key)
      await callWorker(client, 'POST', `/v1/runs/${call.runId}/approvals/${call.callId}`, {
        decision: decide(call),
        args_hash: call.argsHash,
        reason: 'decided by the eval case',
      })
    }
    if (Date.now() > deadline) {
      await callWorker(client, 'POST', `/v1/runs/${runId}/cancel`, {
        reason: 'eval trial timed out',
      }).catch(() => {})
      throw new Error(`run ${runId} did not end within ${timeoutMs} ms (cancelled)`)
    }
    await new Promise((r) => setTimeout(r, POLL_MS))
  }
}
