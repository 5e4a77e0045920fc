import type { DecideInput, DecideRefusal } from '../kernel/approvals'
import type { Budget } from '../kernel/budget'
import type { ConfirmPolicy } from '../kernel/confirm'
import type { FollowUpSource } from '../kernel/conversation'
import type { Conversation } from '../kernel/conversation-schema'
import type { AgentInput } from '../kernel/agent-schema'
import type { ChildOutcome } from '../kernel/delegation'
import type { ParentRef } from '../kernel/state'
import type { CallbackEvents, RunStatus } from '../api/enums'
import type { DecisionResultBody, PendingApprovalBody, RunViewBody } from '../api/response-schemas'
import type { StreamRequest, Subscription } from './events/event-stream'
import type { RunOwner } from './run-owner'

/** Where a Slack-started run answers (the thread: the mention's ts, or the ack message's ts). */
export type SlackOrigin = NonNullable<RunViewBody['slack']> & { userId: string }

export interface StartInput {
  id: string
  task: string
  /** The enabled tools the run may use. */
  tools: string[]
  /**
   * The MCP tools it may use, as asked (`<server>__<tool>`, `<server>__*`): their lists are
   * fetched and frozen before its first step (runs/mcp-tools.ts).
   */
  mcpTools?: string[]
  budget: Budget
  protocol: 'auto' | 'text' | 'native'
  policy: ConfirmPolicy
  model?: string
  callbackUrl?: string
  /** `all`: every run event goes to callbackUrl too, not only the final result. */
  callbackEvents?: CallbackEvents
  metadata?: Record<string, unknown>
  /** `api`, `webhook`, or `slack:<user id>`. */
  requestedBy: string
  /**
   * The token the run belongs to (runs/run-owner.ts): the starting token's name, the continued
   * run's owner for a follow-up, `inheritedOwner(parent)` for a child run; null: no token's.
   */
  owner: RunOwner
  slack?: SlackOrigin
  /** Hash of what was asked; a reused idempotency key with a different request is refused. */
  requestHash?: string
  /** The conversation this run continues, its history already fitted (runs/start/continuation.ts). */
  conversation?: Conversation
  /** The caller's trace (`traceparent`), which the run's spans join. */
  trace?: RunTrace
  /** The agent the run copies (runs/start/ resolved and checked it). */
  agent?: AgentInput
  /** A child run: the run and call that started it (runs/child-runs.ts). */
  parent?: ParentRef
  /**
   * A run not started from Slack that posts its pending items' cards there, and nothing else: a
   * child of a Slack-started run (the parent's thread), or a run of the API, a webhook, MCP or
   * A2A whose agent (or the deployment) names an approvals channel.
   */
  slackCards?: SlackCards
}

/**
 * Where a run posts its pending items' cards, and nothing else: a child of a Slack-started run,
 * the root run's channel and thread with the Slack user who asked and the agent that delegated
 * (the card names both); any other run, the approvals channel alone (no thread, no Slack user).
 */
export type SlackCards = Omit<SlackOrigin, 'userId'> & { userId?: string; parentAgent?: string }

/** What the run's info row keeps: its trace, and the caller's span it joins, if any. */
export interface RunTrace {
  traceId: string
  parentSpanId?: string
  /**
   * The trace is shared with other runs (a caller's, a parent's): the run's span ids are made
   * from its id too, so two runs in one trace never collide. Absent in runs from before.
   */
  shared?: true
}

/** Stored beside the state: who asked and where to report. */
export interface RunInfo {
  requestedBy: string
  /** Whose run it is (runs/run-owner.ts); absent in runs from before owners: see ownerOf. */
  owner?: RunOwner
  requestHash?: string
  callbackUrl?: string
  callbackEvents?: CallbackEvents
  metadata?: Record<string, unknown>
  model?: string
  slack?: SlackOrigin
  /** The MCP tools the run asked for; see StartInput.mcpTools. */
  mcpTools?: string[]
  /** The run's trace (runs/otel/otel-ids.ts); absent in runs from before tracing. */
  trace?: RunTrace
  /** See StartInput.slackCards. */
  slackCards?: SlackCards
}

export type { CallbackEvents, RunStatus }

/** A pending approval as the API shows it (the model's reason: the thought of its step). */
export type PendingApprovalView = PendingApprovalBody

/** `GET /v1/runs/:id`: the run as the API shows it. */
export type RunView = RunViewBody

/**
 * A decision as the RunStore takes it: the kernel's, stamped with the time by the RunStore;
 * edited arguments (`args`) come unchecked, and the RunStore checks and hashes them.
 */
export type DecideRequest = Omit<DecideInput, 'now' | 'edit'> & { args?: Record<string, unknown> }

/**
 * The decision recorded, or why not: the kernel's refusals, no such run, a cancel under way, or
 * edited arguments or an answer that do not fit (with the fields and problems).
 */
export type DecideResponse =
  | DecisionResultBody
  | (Omit<DecideRefusal, 'code'> & {
      ok: false
      code: DecideRefusal['code'] | 'no_run' | 'run_cancelling' | 'invalid_args' | 'invalid_answer'
      problems?: string[]
      fields?: string[]
    })

/**
 * The RunStore's RPC surface as callers see it. (Workers' generated stub types reduce
 * `unknown`-typed fields such as metadata to `never`, so callers use this instead.)
 */
export interface RunStoreApi {
  start(input: StartInput): Promise<StartAnswer>
  get(): Promise<RunView | null>
  deletion(): Promise<{ deletedAt: number; by: string } | null>
  delete(by: string): Promise<DeleteAnswer>
  export(): Promise<ReadableStream<Uint8Array> | null>
  decide(input: DecideRequest): Promise<DecideResponse>
  cancel(by: string, reason?: string): Promise<{ ok: boolean; code?: string; message: string }>
  events(request: StreamRequest): Promise<Subscription | null>
  openStreams(): Promise<number>
  observation(handle: string): Promise<{ text: string | null } | null>
  followUp(): Promise<FollowUpAnswer>
  /** Whose run it is, or that it was deleted (by whom), or that there is none. */
  owner(): Promise<OwnerAnswer>
  conversationObservation(handle: string, conversationId: string): Promise<string | null>
  childFinished(callId: string, outcome: ChildOutcome): Promise<{ ok: boolean }>
}

/** What `start` answers: the run (new or existing), or that this id belonged to a deleted run. */
export type StartAnswer =
  | { created: boolean; conflict?: boolean; deleted?: undefined; view: RunView }
  | { created: false; deleted: true }

/** What `delete` answers: wiped now, wiped when the slice in flight stops, or no such run. */
export type DeleteAnswer =
  { ok: true; status: 'deleted' | 'deleting' } | { ok: false; code: 'no_run' }

/** What a run gives a run that would continue it: its turns, or why it cannot be continued. */
export type FollowUpAnswer =
  | { ok: true; requestedBy: string; owner: RunOwner; source: FollowUpSource }
  | { ok: false; code: 'no_run' }
  | { ok: false; code: 'deleted' }
  | { ok: false; code: 'run_not_finished'; status: RunStatus }

/** What `owner` answers (routes/api/run-access.ts). */
export type OwnerAnswer =
  { run: 'live'; owner: RunOwner } | { run: 'deleted'; by: string } | { run: 'none' }

/** The stub of run `id`'s Durable Object. */
export function runStub<T extends Rpc.DurableObjectBranded | undefined>(
  ns: DurableObjectNamespace<T>,
  id: string,
): RunStoreApi {
  return ns.get(ns.idFromName(id)) as unknown as RunStoreApi
}
