import { pendingApprovals } from '../kernel/approvals'
import { conversationView } from '../kernel/conversation'
import { childrenOf } from '../kernel/trace'
import { type RunState } from '../kernel/state'
import { toApiDelivery, toApiResult, type SkippedTool } from './api-result'
import type { IndexedApproval } from './index/run-index'
import type { OutboxEntry } from './outbox/outbox'
import type { RunInfo, RunStatus, RunView } from './types'

/** The run as `GET /v1/runs/:id` shows it. */
export function toRunView(
  state: RunState,
  info: RunInfo,
  deliveries: OutboxEntry[],
  blocked?: RunView['blocked'],
  skippedTools: SkippedTool[] = [],
): RunView {
  return {
    id: state.id,
    status: statusOf(state),
    phase: state.phase,
    task: state.task,
    createdAt: new Date(state.createdAt).toISOString(),
    requestedBy: info.requestedBy,
    ...(info.metadata ? { metadata: info.metadata } : {}),
    ...slackPlace(info),
    ...(blocked && state.phase !== 'done' ? { blocked } : {}),
    agent: { name: state.agent.name, version: state.agent.version },
    conversation: conversationView(state),
    parentRunId: state.parent?.runId ?? null,
    children: childrenOf(state),
    stepCount: state.steps.length,
    pendingApprovals: pendingApprovalsOf(state).map(({ requestedAt, expiresAt, ...a }) => ({
      ...a,
      requestedBy: info.requestedBy,
      requestedAt: new Date(requestedAt).toISOString(),
      expiresAt: new Date(expiresAt).toISOString(),
    })),
    // Filled in by the route, which asks the children (routes/api/run-family.ts).
    descendantApprovals: [],
    result: toApiResult(state, skippedTools),
    // Delivered event callbacks (`callback_events: "all"`) would grow the view with every event;
    // the run index is written on every change. Both show only while they wait or failed.
    deliveries: deliveries
      .filter(
        (d) =>
          (d.kind !== 'callback.event' && d.kind !== 'index' && d.kind !== 'otel') ||
          d.status !== 'delivered',
      )
      .map(toApiDelivery),
  }
}

/** Where in Slack the run talks: its own origin, or (a child) its approval cards' thread. */
function slackPlace(info: RunInfo): { slack?: RunView['slack'] } {
  if (info.slack) return { slack: info.slack }
  if (!info.slackCards) return {}
  const { parentAgent: _agent, ...place } = info.slackCards
  return { slack: place }
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
  }))
}

export function statusOf(state: RunState): RunStatus {
  if (state.phase === 'done') return state.result?.ok ? 'succeeded' : 'failed'
  if (state.phase === 'await_approval') return 'awaiting_approval'
  // A run waiting for its child is running: its work goes on in the child.
  return 'running'
}
