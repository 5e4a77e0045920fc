import { pendingApprovals } from '../kernel/approvals'
import { conversationView } from '../kernel/conversation'
import { findCall } from '../kernel/calls'
import { childrenOf } from '../kernel/trace'
import { type RunState } from '../kernel/state'
import { toApiDelivery, toApiResult, type SkippedTool } from './api-result'
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
  const thoughtOf = (callId: string) => {
    const found = findCall(state, callId)
    return found ? state.steps[found.stepIndex]!.thought : ''
  }
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
    pendingApprovals: pendingApprovals(state).map(({ call }) => ({
      callId: call.id,
      tool: call.name,
      args: call.args,
      argsHash: call.approval!.hash,
      reason: thoughtOf(call.id),
      requestedBy: info.requestedBy,
      requestedAt: new Date(call.approval!.requestedAt).toISOString(),
      expiresAt: new Date(call.approval!.expiresAt).toISOString(),
    })),
    // Filled in by the route, which asks the children (routes/run-family.ts).
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

export function statusOf(state: RunState): RunStatus {
  if (state.phase === 'done') return state.result?.ok ? 'succeeded' : 'failed'
  if (state.phase === 'await_approval') return 'awaiting_approval'
  // A run waiting for its child is running: its work goes on in the child.
  return 'running'
}
