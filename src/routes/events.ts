import type { Context } from 'hono'
import { eventStreamLimits } from '../config/event-streams'
import type { EnvRecord } from '../config'
import { STREAM_RETRY_AFTER_SECONDS } from '../runs/events/event-stream'
import type { AppEnv } from './app-env'
import { ApiError } from './api-error'
import { reachableRun } from './run-access'
import { runNotFound } from './run-not-found'

/**
 * `GET /v1/runs/:id/events`: the run's events as `text/event-stream` (docs/architecture.md#events). Resumes after
 * `Last-Event-ID` (what EventSource sends on reconnect) or `?after=N`; ends after `run_finished`.
 * Beyond the open stream limits (docs/limits.md) the answer is a 429 with Retry-After.
 */
export async function streamEvents(c: Context<AppEnv>): Promise<Response> {
  const id = c.req.param('id') ?? ''
  const after = resumePoint(c.req.header('Last-Event-ID'), c.req.query('after'))
  const stub = await reachableRun(c, id)
  const limits = eventStreamLimits(c.env as unknown as EnvRecord)
  const opened = await stub.events({ after, holder: c.var.principal, limits })
  if (!opened) throw await runNotFound(stub, id)
  if (!opened.ok) {
    const whose = opened.scope === 'run' ? `run ${id} has` : `token "${c.var.principal}" has`
    const setting = opened.scope === 'run' ? 'EVENT_STREAMS_PER_RUN' : 'EVENT_STREAMS_PER_TOKEN'
    const error = new ApiError(
      429,
      'too_many_streams',
      `${whose} ${opened.limit} event streams open (${setting}); close one, or retry after ${STREAM_RETRY_AFTER_SECONDS} s`,
      { scope: opened.scope, limit: opened.limit },
    )
    return c.json(error.toJSON(), 429, { 'Retry-After': String(STREAM_RETRY_AFTER_SECONDS) })
  }
  return new Response(relay(opened.stream), {
    headers: {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache, no-transform',
      // Proxies such as nginx would otherwise buffer the stream.
      'X-Accel-Buffering': 'no',
    },
  })
}

/** The sequence number to resume after: the header wins (it is the newer of the two). */
function resumePoint(header: string | undefined, query: string | undefined): number {
  const value = header?.trim() || query
  if (value === undefined || value === '') return 0
  if (!/^\d{1,15}$/.test(value)) {
    throw new ApiError(
      400,
      'invalid_after',
      `${header?.trim() ? 'Last-Event-ID' : 'after'} must be an event sequence number (a non-negative integer), got "${value.slice(0, 40)}"`,
    )
  }
  return Number(value)
}

/**
 * The run object's stream, read through the Worker's own stream. When the client goes away,
 * handing the object's stream to the Response as it is lets workerd abort the RPC pipe under it,
 * which it logs (`kj/async-io … disconnected: read end of pipe was aborted`, with a stack) though
 * nothing failed; a cancel passed on from here ends it quietly.
 */
function relay(source: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  const reader = source.getReader()
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await reader.read()
      if (done) controller.close()
      else controller.enqueue(value)
    },
    cancel(reason) {
      return reader.cancel(reason)
    },
  })
}
