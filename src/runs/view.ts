import { conversationView } from '../kernel/conversation'
import { childrenOf } from '../kernel/trace'
import { type Call, type RunState } from '../kernel/state'
import type { DeliveryBody } from '../api/response-schemas'
import { toApiResult, type SkippedTool } from './api-result'
import { pendingApprovalsOf } from './index/run-index-entry'
import type { OutboxEntry } from './outbox/outbox'
import { itemActions } from './pending-item-actions'
import { statusOf } from './run-status'
import type { DecideResponse, RunInfo, RunView } from './types'

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
      ...itemActions(state.id, a.callId, a),
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

/** A delivery as the API shows it: no payload, times in ISO 8601. */
function toApiDelivery(entry: OutboxEntry): DeliveryBody {
  const { payload: _p, result: _r, nextAt, updatedAt, ...rest } = entry
  const iso = (ms: number) => new Date(ms).toISOString()
  return { ...rest, nextAt: iso(nextAt), updatedAt: iso(updatedAt) }
}

/** A decision as the API answers it; `replayed` when it was recorded by an earlier request. */
export function decisionAnswer(call: Call, replayed: boolean): DecideResponse {
  return {
    ok: true,
    call: { id: call.id, name: call.name, status: call.status },
    decidedBy: call.approval!.decidedBy!,
    decision: call.approval!.decision!,
    // An approval's answer keeps the shape it had before other kinds.
    ...(call.approval!.kind !== 'approval' ? { kind: call.approval!.kind } : {}),
    ...(call.approval!.edit ? { args: call.args, argsHash: call.approval!.hash } : {}),
    ...(replayed ? { replayed: true as const } : {}),
  }
}
