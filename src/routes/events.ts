import type { Context } from 'hono'
import { runStub } from '../runs/types'
import type { AppEnv } from './app-env'
import { ApiError } from './api-error'
import { RUN_ID_PATTERN } from './schemas'
import { runNotFound } from './run-not-found'

/**
 * `GET /v1/runs/:id/events`: the run's events as `text/event-stream` (docs/architecture.md#events). Resumes after
 * `Last-Event-ID` (what EventSource sends on reconnect) or `?after=N`; ends after `run_finished`.
 */
export async function streamEvents(c: Context<AppEnv>): Promise<Response> {
  const id = c.req.param('id') ?? ''
  const after = resumePoint(c.req.header('Last-Event-ID'), c.req.query('after'))
  if (!RUN_ID_PATTERN.test(id))
    throw new ApiError(404, 'run_not_found', `no run ${id.slice(0, 100)}`)
  const stub = runStub(c.env.RUNS, id)
  const stream = await stub.events(after)
  if (!stream) throw await runNotFound(stub, id)
  return new Response(relay(stream), {
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
