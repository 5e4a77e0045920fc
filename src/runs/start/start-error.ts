import { RequestError } from '../../errors/request-error'

/**
 * What kind of refusal a start is, in the domain's terms: the request is `invalid` as asked, it
 * names something that is `not_found` (an agent, the run to continue), or it is in `conflict`
 * with a run that exists (a reused idempotency key, a run still working). Whoever answers the
 * requester decides what that becomes (routes/app.ts: an HTTP status).
 */
export type StartRefusal = 'invalid' | 'not_found' | 'conflict'

/**
 * A run that was not started, and why: a stable `code` (the API's error codes,
 * docs/http-api.md), a message that says what to change, and the specifics in `details`.
 */
export class StartError extends RequestError {
  override name = 'StartError'
  constructor(
    readonly refusal: StartRefusal,
    code: string,
    message: string,
    details?: unknown,
  ) {
    super(code, message, { details })
  }
}
