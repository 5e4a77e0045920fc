import type { Context } from 'hono'
import { STREAM_RETRY_AFTER_SECONDS } from '../runs/events/event-stream'
import type { AppEnv } from './app-env'
import { ApiError } from './api-error'

/**
 * A stream refused by a limit: `429 too_many_streams` with Retry-After (docs/limits.md);
 * `held` says who holds how many, e.g. `run x has 32 event streams`.
 */
export function tooManyStreams(
  c: Context<AppEnv>,
  refused: { scope: string; limit: number },
  held: string,
  setting: string,
): Response {
  const error = new ApiError(
    429,
    'too_many_streams',
    `${held} open (${setting}); close one, or retry after ${STREAM_RETRY_AFTER_SECONDS} s`,
    { scope: refused.scope, limit: refused.limit },
  )
  return c.json(error.toJSON(), 429, { 'Retry-After': String(STREAM_RETRY_AFTER_SECONDS) })
}

/** A Durable Object's stream as a `text/event-stream` answer. */
export function sseResponse(source: ReadableStream<Uint8Array>): Response {
  return new Response(relay(source), {
    headers: {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache, no-transform',
      // Proxies such as nginx would otherwise buffer the stream.
      'X-Accel-Buffering': 'no',
    },
  })
}

/**
 * The object's stream, read through the Worker's own stream. When the client goes away,
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
