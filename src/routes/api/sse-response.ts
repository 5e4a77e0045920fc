import type { Context } from 'hono'
import { STREAM_RETRY_AFTER_SECONDS } from '../../runs/events/event-stream'
import type { AppEnv } from '../app-env'
import { ApiError } from '../api-error'

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

/**
 * A Durable Object's stream as a `text/event-stream` answer. The object's stream is the body as
 * it is: workerd pumps it to the client without running JavaScript per chunk (a relay through a
 * stream of the Worker's own cost every subscriber a read and an enqueue per write;
 * docs/architecture.md#performance). A client that goes away is noticed by the object at its
 * next write to the stream, a heartbeat at the latest.
 */
export function sseResponse(source: ReadableStream<Uint8Array>): Response {
  return new Response(source, {
    headers: {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache, no-transform',
      // Proxies such as nginx would otherwise buffer the stream.
      'X-Accel-Buffering': 'no',
    },
  })
}
