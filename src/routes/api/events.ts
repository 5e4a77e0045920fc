import type { Context } from 'hono'
import { eventStreamLimits } from '../../config/event-streams'
import type { EnvRecord } from '../../config'
import type { AppEnv } from '../app-env'
import { ApiError } from '../api-error'
import { reachableRun } from './run-access'
import { runNotFound } from './run-not-found'
import { sseResponse, tooManyStreams } from './sse-response'

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
    return tooManyStreams(c, opened, `${whose} ${opened.limit} event streams`, setting)
  }
  return sseResponse(opened.stream)
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
