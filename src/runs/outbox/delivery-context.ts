import type { RunState } from '../../kernel/state'
import type { EnvVars } from '../../env-vars'
import type { EventLog } from '../events/event-log'
import type { Outbox } from './outbox'
import type { OutboxEntryOf, OutboxKind, OutboxResult } from './outbox-kinds'
import type { SlackThread } from '../slack-thread'
import type { RunListHub } from '../index/run-list-hub'
import type { SkippedTool } from '../api-result'
import type { RunInfo } from '../types'

/** The model text still being written for a step (never stored; gone with the isolate). */
export interface LiveAnswer {
  step: number
  text: string
}

/** What every delivery (callback, Slack) is given: the run as it now is, and its outbox. */
export interface DeliveryContext {
  env: EnvVars
  state: RunState
  info: RunInfo
  outbox: Outbox
  /** The run's events, for `callback_events: "all"` deliveries. */
  events?: EventLog
  /** The D1 run index (docs/architecture.md#events). */
  runIndex?: D1Database
  /** The hub of the run-list streams, told of each index write. */
  runList?: DurableObjectNamespace<RunListHub>
  /** The Slack conversation places, for a run whose thread starts with its first message. */
  slackThreads?: DurableObjectNamespace<SlackThread>
  /** The runs' objects: a child reports its end to its parent, a parent cancels its children. */
  runs?: DurableObjectNamespace
  /** The MCP tools the run left out, for the trace a callback carries. */
  skippedTools?: SkippedTool[]
  /** The reply being written now, for the Slack answer stream. */
  liveAnswer?: () => LiveAnswer | undefined
  /** The run as it is now (`state` is as it was when the delivery began). */
  latestState?: () => RunState
  /** When each slice of the run began (trace export). */
  slices?: number[]
  now: number
}

/** Delivers one entry of kind `K`; throws DeliveryError to be retried later. */
export type Deliverer<K extends OutboxKind> = (
  entry: OutboxEntryOf<K>,
  ctx: DeliveryContext,
) => Promise<OutboxResult<K>>
