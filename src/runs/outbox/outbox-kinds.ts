import type { DeliveryStatus } from '../../api/enums'
import type { ThreadClaim } from '../slack-place'

/**
 * Every kind of outbox entry, with what it carries (`payload`, stored when it is queued) and what
 * its delivery records (`result`, stored when it is delivered and read by later deliveries). An
 * entry's id fixes its kind: most kinds have one entry per run, named after the kind; the others
 * are `<kind>:<key>` (`slack.approval:<call id>`, `event:<seq>`, `otel:step:<i>`).
 */
export interface OutboxKinds {
  /** The final RunResult, POSTed to the run's callback_url. */
  callback: { payload: NoPayload; result: CallbackSent }
  /** One run event for `callback_events: "all"`. */
  'callback.event': { payload: { seq: number }; result: CallbackSent }
  /** The run's row in the D1 run index, written from the run as it is when delivered. */
  index: { payload: NoPayload; result: void }
  /** The "working on it" thread message: its ts is the thread when the run started none. */
  'slack.started': { payload: NoPayload; result: SlackPosted }
  /** The Approve / Deny message of one call. */
  'slack.approval': { payload: { callId: string }; result: SlackPosted | Skipped }
  /** The approval message replaced with the decision. */
  'slack.decision': { payload: { callId: string }; result: { ts: string } | Skipped }
  /** The final answer or explicit failure. */
  'slack.final': { payload: NoPayload; result: { ts: string } | { streamed: true } }
  /** The run recorded in the Slack place its first message started. */
  'slack.thread': { payload: NoPayload; result: ThreadClaim | Skipped }
  /** Live progress in the first thread message (re-armed). */
  'slack.progress': { payload: NoPayload; result: ProgressSent | Skipped }
  /** The answer streamed into the thread (re-armed). */
  'slack.stream': { payload: NoPayload; result: StreamSent }
  /** The assistant thread status (re-armed). */
  'slack.status': { payload: NoPayload; result: StatusSent | Skipped }
  /** One trace batch, `otel:step:<i>` or `otel:run`, as OTLP/HTTP JSON. */
  otel: { payload: NoPayload; result: TraceSent }
  /** A child run's outcome, to the run that delegated it (docs/agents.md#delegation). */
  parent: { payload: NoPayload; result: { parentRunId: string } }
  /** A child run cancelled because its parent ended while it ran. */
  'cancel.child': { payload: { runId: string; callId: string }; result: ChildCancelled }
  /**
   * A deleted run's row removed from the run index; `owner` (absent in entries queued before it
   * was recorded) says which run-list streams are told.
   */
  'forget.index': { payload: { owner?: string | null }; result: void }
  /** A deleted run removed from the Slack places that name it. */
  'forget.slack': { payload: { places: SlackPlace[] }; result: { places: number } }
}

export type OutboxKind = keyof OutboxKinds
export type OutboxPayload<K extends OutboxKind> = OutboxKinds[K]['payload']
export type OutboxResult<K extends OutboxKind = OutboxKind> = OutboxKinds[K]['result']

/** One entry of each kind, by kind (see `OutboxEntryOf`). */
export type OutboxEntries = {
  [K in OutboxKind]: {
    id: string
    kind: K
    payload: OutboxPayload<K>
    status: DeliveryStatus
    attempts: number
    nextAt: number
    lastError?: string
    updatedAt: number
    /** What the last successful delivery recorded. */
    result?: OutboxResult<K>
  }
}

/** An entry of kind `K` (a union over kinds, discriminated by `kind`). */
export type OutboxEntryOf<K extends OutboxKind> = OutboxEntries[K]
export type OutboxEntry = OutboxEntryOf<OutboxKind>

/** The kinds whose payload is empty. */
type NoPayload = Record<string, never>

/** A delivery that had nothing to do, and why. */
export interface Skipped {
  skipped: string
}

export interface CallbackSent {
  status: number
}

/** A posted Slack message. */
export interface SlackPosted {
  ts?: string
  channel?: string
}

/** What the progress message shows now. */
export interface ProgressSent {
  ts: string
  text: string
}

/** The thread status Slack shows now. */
export interface StatusSent {
  status: string
}

/** What Slack has of the answer stream (a skipped delivery's `skipped` is kept beside it). */
export interface StreamSent {
  /** A delivery that had nothing to do, and why. */
  skipped?: string
  /** Streaming is not available here (the Slack error code): the final answer is posted. */
  unavailable?: string
  /** The step whose text the current (or last) stream message holds. */
  step?: number
  channel?: string
  ts?: string
  /** The text Slack has been sent for that message. */
  sent?: string
  stopped?: boolean
  /** The stopped message holds the run's whole answer: nothing else needs posting. */
  complete?: boolean
}

/** A trace batch the collector took (`status` absent: the batch had no spans to send). */
export interface TraceSent {
  status?: number
  spans: number
  rejectedSpans?: number
}

/** What a cancel of a child answered (`code`: it had finished already, or is gone). */
export interface ChildCancelled {
  childRunId: string
  cancelled: boolean
  code?: string
}

/** A Slack place that names a run: a thread, or a direct message's top level. */
export interface SlackPlace {
  teamId?: string
  channel: string
  thread?: string
}
