import { findCall } from '../kernel/calls'
import type { RunState } from '../kernel/state'
import type { HeldMcpCalls } from '../mcp/index'

/**
 * The MCP calls held open on a server's question whose item was closed without their handler
 * taking the answer (docs/mcp.md#questions-from-servers): a person declined it (the server is
 * sent `decline`), it expired, the run was cancelled or ended (`cancel`). What the server answers
 * then is not used (the call's observation already says the question was not answered), but it
 * is waited for, within the server's timeout, before the slice ends its sessions.
 */
export async function releaseClosedQuestions(
  held: HeldMcpCalls,
  state: RunState | undefined,
): Promise<void> {
  const releasing: Promise<void>[] = []
  for (const key of held.keys()) {
    const callId = state && key.startsWith(`${state.id}:`) ? key.slice(state.id.length + 1) : null
    const call = state && callId ? findCall(state, callId)?.call : undefined
    // Waiting still, or about to run again with the answer (the handler takes the held call).
    if (call && state!.phase !== 'done' && WILL_RUN.has(call.status)) continue
    const item = call?.approval
    const declined = item?.decision === 'denied' && item.decidedBy !== 'system'
    releasing.push(held.release(key, { action: declined ? 'decline' : 'cancel' }))
  }
  await Promise.all(releasing)
}

const WILL_RUN = new Set(['awaiting_approval', 'approved', 'started'])
