import type { EventStore } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import type { ServerNotification } from '@modelcontextprotocol/sdk/types.js'
import type { RunView } from '../../runs/types'
import { waitingFor } from './run-result'
import { eventId, type CallCursor } from './signed-ids'

/** How long a client whose call stream was closed waits before it resumes it (SSE `retry:`). */
export const RESUME_RETRY_MS = 1_000

/**
 * The SSE event ids of one tools/call's stream (docs/serving.md#sessions-and-resumption): each is
 * the call's cursor as it stands when the event is sent, signed; nothing is stored. The SDK's
 * transport asks for one per event (the priming event first); a client that reconnects with
 * GET and Last-Event-ID is answered by resume-call.ts from the run itself, never from here.
 */
export class CallEvents implements EventStore {
  constructor(
    private readonly key: string,
    private readonly caller: string,
    readonly cursor: CallCursor,
  ) {}

  storeEvent(): Promise<string> {
    return eventId(this.key, this.caller, this.cursor)
  }

  replayEventsAfter(): Promise<string> {
    return Promise.reject(new Error('a call stream is resumed by GET /mcp (resume-call.ts)'))
  }
}

/**
 * What a call's stream says of a change in its run: a progress notification when the call asked
 * for progress (its token; `progress` counts up), and a log message while it waits for a person.
 */
export function changeNotifications(
  view: RunView,
  progressToken: string | number | undefined,
  progress: number,
): ServerNotification[] {
  const waiting = view.status === 'awaiting_approval'
  const message = waiting ? waitingFor(view) : `run ${view.id}: step ${view.stepCount}`
  const out: ServerNotification[] = []
  if (waiting) out.push(logNotification(message, view.id))
  if (progressToken !== undefined) {
    out.push({ method: 'notifications/progress', params: { progressToken, progress, message } })
  }
  return out
}

/** A log message (notifications/message) on a call's stream: what the run is doing. */
export function logNotification(message: string, runId: string): ServerNotification {
  return {
    method: 'notifications/message',
    params: { level: 'info', logger: 'edgeloop', data: { message, runId } },
  }
}
