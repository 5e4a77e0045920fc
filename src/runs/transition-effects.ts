import { pendingApprovals } from '../kernel/approvals'
import type { RunState } from '../kernel/state'
import type { EventLog } from './events/event-log'
import { eventsBetween } from './events/events'
import type { Outbox } from './outbox/outbox'
import { changesIndex } from './index/run-index-entry'
import { queueProgress } from './slack/slack-progress'
import { queueStatus } from './slack/slack-status'
import { queueStreamEnd } from './slack/slack-stream'
import { slackCardKey } from './slack/slack-card-key'
import { queueTraceBatches } from './otel/otel-delivery'
import { queueFamily } from './delivery/family-delivery'
import { SLACK_THREAD_ID } from './slack-place'
import type { RunInfo } from './types'

/** Where a saved change of the run writes what it causes (inside the change's transaction). */
export interface EffectSinks {
  outbox: Outbox
  events: EventLog
  /** The app is a Slack assistant app (SLACK_ASSISTANT): its threads get a status. */
  assistant?: boolean
  /** Traces are exported (OTEL_EXPORTER_OTLP_*): queue the batches a transition completes. */
  otel?: boolean
}

/**
 * What one saved transition causes, queued in the transaction that saves it: Slack approval
 * requests and decision updates, the final callback and Slack message, Slack progress, and the
 * run's events with their callbacks and index row.
 */
export function queueTransitionEffects(
  sinks: EffectSinks,
  info: RunInfo,
  prev: RunState | undefined,
  next: RunState,
  now: number,
): void {
  const { outbox } = sinks
  const cards = info.slack ?? info.slackCards
  if (next.phase === 'await_approval' && prev?.phase !== 'await_approval' && cards) {
    for (const { call } of pendingApprovals(next)) {
      const key = slackCardKey(call.id, call.approval?.kind ?? 'approval')
      outbox.enqueue(`slack.approval:${key}`, 'slack.approval', { callId: call.id }, now)
    }
  }
  queueDecisions(outbox, info, prev, next, now)
  if (next.phase === 'done') {
    if (info.callbackUrl) outbox.enqueue('callback', 'callback', {}, now)
    if (info.slack) outbox.enqueue('slack.final', 'slack.final', {}, now)
    if (prev?.phase !== 'done') queueFamily(outbox, prev, next, now)
  }
  queueProgress(outbox, prev, next, info, now)
  queueSlackExtras(sinks, info, prev, next, now)
  if (sinks.otel) queueTraceBatches(outbox, prev, next, now)
  recordEvents(sinks, info, prev, next, now)
}

/**
 * What a new run causes, queued in the transaction that creates it: its first Slack message (and
 * the record of the thread that message starts), the assistant thread's status, its events.
 */
export function queueRunStarted(
  sinks: EffectSinks,
  info: RunInfo,
  state: RunState,
  now: number,
): void {
  if (info.slack) sinks.outbox.enqueue('slack.started', 'slack.started', {}, now)
  // A thread that starts with our first message: replies there continue this run.
  if (info.slack && !info.slack.threadTs)
    sinks.outbox.enqueue(SLACK_THREAD_ID, SLACK_THREAD_ID, {}, now)
  // An assistant thread says at once that the run is thinking.
  queueSlackExtras(sinks, info, undefined, state, now)
  recordEvents(sinks, info, undefined, state, now)
}

/** What a person's decision causes, queued in the transaction that saves it. */
export function queueDecisionEffects(
  sinks: EffectSinks,
  info: RunInfo,
  prev: RunState,
  next: RunState,
  now: number,
): void {
  queueDecisions(sinks.outbox, info, prev, next, now)
  queueProgress(sinks.outbox, prev, next, info, now)
  queueSlackExtras(sinks, info, prev, next, now)
  recordEvents(sinks, info, prev, next, now)
}

/** The answer stream's end and the assistant thread status, for a run that reports to Slack. */
export function queueSlackExtras(
  sinks: EffectSinks,
  info: RunInfo,
  prev: RunState | undefined,
  next: RunState,
  now: number,
): void {
  if (!info.slack) return
  queueStreamEnd(sinks.outbox, prev, next, now)
  if (sinks.assistant) queueStatus(sinks.outbox, prev, next, now)
}

/**
 * Queues the Slack update for each call of the last step whose decision is new in `next`:
 * approvals, denials, expiries and cancellations all replace the buttons, once.
 */
export function queueDecisions(
  outbox: Outbox,
  info: RunInfo,
  prev: RunState | undefined,
  next: RunState,
  now: number,
): void {
  if (!info.slack && !info.slackCards) return
  const before = new Map(prev?.steps.at(-1)?.calls.map((c) => [c.id, c.approval?.decision]))
  for (const call of next.steps.at(-1)?.calls ?? []) {
    if (!call.approval?.decision || before.get(call.id) === call.approval.decision) continue
    const key = slackCardKey(call.id, call.approval.kind)
    outbox.enqueue(`slack.decision:${key}`, 'slack.decision', { callId: call.id }, now)
  }
}

/** Stores the events of a change (inside its transaction) and queues their callbacks. */
export function recordEvents(
  sinks: EffectSinks,
  info: RunInfo,
  prev: RunState | undefined,
  next: RunState,
  now: number,
): void {
  const events = eventsBetween(prev, next)
  if (!events.length) return
  const last = sinks.events.append(events, now)
  // The index row is written from the run as it is when delivered: one entry, re-armed.
  if (changesIndex(prev, next)) sinks.outbox.rearm('index', 'index', {}, now)
  if (info.callbackUrl && info.callbackEvents === 'all') {
    for (let seq = last - events.length + 1; seq <= last; seq++) {
      sinks.outbox.enqueue(`event:${seq}`, 'callback.event', { seq }, now)
    }
  }
}
