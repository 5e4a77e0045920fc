import type { Context } from 'hono'
import { eventStreamLimits } from '../../config/event-streams'
import type { EnvRecord } from '../../config'
import { LIST_EVENT_ID, type ListPosition } from '../../runs/index/list-feed'
import { runListHub } from '../../runs/index/run-list-hub-name'
import type { AppEnv } from '../app-env'
import { ApiError } from '../api-error'
import type { Principal } from '../app-env'
import { onlyOwnedBy } from './run-access'
import { sseResponse, tooManyStreams } from './sse-response'

/**
 * `GET /v1/runs/stream`: changes of the run list as `text/event-stream`, from the run-list hub
 * (docs/http-api.md#the-run-list-stream): a `run` frame each time a run's index row changes, a
 * `run_deleted` frame, and `ready` once caught up. Resumes after `Last-Event-ID` (or `?after=`)
 * while the hub still holds what was missed; else `ready` says to list again. Only the runs the
 * token may see; beyond the stream limits, 429 with Retry-After.
 */
export async function streamRunList(c: Context<AppEnv>): Promise<Response> {
  const after = listPosition(c.req.header('Last-Event-ID'), c.req.query('after'))
  const limits = eventStreamLimits(c.env as unknown as EnvRecord)
  const opened = await runListHub(c.env.RUN_LIST).stream({
    holder: c.var.principal,
    ...ownedBy(c.var.caller),
    ...(after ? { after } : {}),
    limits,
  })
  if (!opened.ok) {
    return opened.scope === 'token'
      ? tooManyStreams(
          c,
          opened,
          `token "${c.var.principal}" has ${opened.limit} run-list streams`,
          'EVENT_STREAMS_PER_TOKEN',
        )
      : tooManyStreams(
          c,
          opened,
          `the deployment has ${opened.limit} run-list streams`,
          'RUN_LIST_STREAMS',
        )
  }
  return sseResponse(opened.stream)
}

/** Where to resume: the header wins (it is the newer of the two); none for a new reader. */
function listPosition(
  header: string | undefined,
  query: string | undefined,
): ListPosition | undefined {
  const value = header?.trim() || query
  if (value === undefined || value === '') return undefined
  const match = LIST_EVENT_ID.exec(value)
  if (!match) {
    throw new ApiError(
      400,
      'invalid_after',
      `${header?.trim() ? 'Last-Event-ID' : 'after'} must be the id of a run-list stream event (<epoch>-<number>), got "${value.slice(0, 40)}"`,
    )
  }
  return { epoch: match[1]!, seq: Number(match[2]) }
}

/** A token limited to its own runs hears only of those (docs/security.md#who-sees-which-runs). */
function ownedBy(caller: Principal): { onlyOwner?: string } {
  const owner = onlyOwnedBy(caller)
  return owner === undefined ? {} : { onlyOwner: owner }
}
