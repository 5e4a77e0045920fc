/**
 * A Slack conversation place (a thread, or a direct message's top level): its object's name,
 * what the object keeps and answers, and the stub callers reach it with. The object itself is
 * runs/slack-thread.ts (here only its surface, so a caller never loads a Durable Object class).
 */

/** The outbox entry that records a run in the thread its first message started. */
export const SLACK_THREAD_ID = 'slack.thread'

export interface ThreadRun {
  runId: string
  /** When the run was claimed here (ms). */
  at: number
  /** The run was deleted: a follow-up here is told so, and nothing continues it. */
  deleted?: true
}

export interface ThreadClaim {
  /** The run this one follows in the place, or null when it is the first. */
  previous: ThreadRun | null
  /** False when `onlyIfKnown` was asked and the place has no run: nothing was recorded. */
  claimed: boolean
}

/** The object's key for a place; `thread` undefined: a direct message's top level. */
export function slackPlaceName(place: {
  teamId?: string
  channel: string
  thread?: string
}): string {
  const where = `${place.teamId ?? '-'}:${place.channel}`
  return place.thread ? `thread:${where}:${place.thread}` : `dm:${where}`
}

/** The RPC surface callers use (the generated stub types are awkward for plain data). */
export interface SlackThreadApi {
  claim(runId: string, now: number, onlyIfKnown?: boolean): Promise<ThreadClaim>
  release(runId: string): Promise<void>
  forget(runId: string): Promise<void>
  latest(): Promise<ThreadRun | null>
}

export function slackThreadStub<T extends Rpc.DurableObjectBranded | undefined>(
  ns: DurableObjectNamespace<T>,
  place: Parameters<typeof slackPlaceName>[0],
): SlackThreadApi {
  return ns.get(ns.idFromName(slackPlaceName(place))) as unknown as SlackThreadApi
}
