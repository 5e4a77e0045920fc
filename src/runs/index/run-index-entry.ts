import type { RunState } from '../../kernel/state'
import type { IndexedApproval, RunIndexEntry } from './run-index'
import type { RunInfo } from '../types'
import { pendingApprovals } from '../../kernel/approvals'
import { statusOf } from '../run-status'
import { ownerOf } from '../run-owner'

/** The index row of a run as it now stands; `version` is its last event's sequence number. */
export function runIndexEntry(
  state: RunState,
  info: RunInfo,
  version: number,
  updatedAt: number,
): RunIndexEntry {
  return {
    id: state.id,
    task: state.task,
    status: statusOf(state),
    createdAt: state.createdAt,
    updatedAt,
    stepCount: state.steps.length,
    requestedBy: info.requestedBy,
    owner: ownerOf(info),
    agent: { name: state.agent.name, version: state.agent.version },
    ...(info.metadata ? { metadata: info.metadata } : {}),
    ...(state.conversation
      ? { conversation: { id: state.conversation.id, position: state.conversation.position } }
      : {}),
    ...(state.parent ? { parentRunId: state.parent.runId } : {}),
    version,
    approvals: pendingApprovalsOf(state),
    everPending: everPending(state),
  }
}

/** Whether any call of the run has waited for a person (its item stays on the call). */
function everPending(state: RunState): boolean {
  return state.steps.some((step) =>
    step.calls.some((call) => call.approval !== null || call.status === 'awaiting_approval'),
  )
}

/**
 * Whether a change moves the index: a new run, another status, another step, or other pending
 * approvals (a call decided while another of its step still waits leaves the inbox at once).
 */
export function changesIndex(prev: RunState | undefined, next: RunState): boolean {
  return (
    !prev ||
    statusOf(prev) !== statusOf(next) ||
    prev.steps.length !== next.steps.length ||
    (statusOf(next) === 'awaiting_approval' && pendingIds(prev) !== pendingIds(next))
  )
}

function pendingIds(state: RunState): string {
  return pendingApprovals(state)
    .map(({ call }) => call.id)
    .join(',')
}

/**
 * The run's pending approvals, each with the model's reason (the thought of its step), as the
 * index stores them; the view adds the requester and ISO 8601 times.
 */
export function pendingApprovalsOf(state: RunState): IndexedApproval[] {
  return pendingApprovals(state).map(({ stepIndex, call }) => ({
    callId: call.id,
    tool: call.name,
    args: call.args,
    argsHash: call.approval!.hash,
    reason: state.steps[stepIndex]!.thought,
    requestedAt: call.approval!.requestedAt,
    expiresAt: call.approval!.expiresAt,
    kind: call.approval!.kind,
    ask: call.approval!.ask,
    editSchema: call.approval!.editSchema,
  }))
}
