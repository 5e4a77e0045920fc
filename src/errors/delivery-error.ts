import { EdgeloopError } from './edgeloop-error'

/**
 * The far end's fault: a notification a run owes (signed callback, Slack message) was not
 * delivered. `retryable: false` gives up at once (e.g. a Slack `channel_not_found`); otherwise
 * the outbox tries again with backoff, or after `retryAfterMs` when the server asked for it.
 */
export class DeliveryError extends EdgeloopError {
  override name = 'DeliveryError'
  readonly retryable: boolean
  /** Server-requested delay (Retry-After), ms. */
  readonly retryAfterMs?: number
  constructor(
    message: string,
    options: { retryable?: boolean; retryAfterMs?: number | undefined; cause?: unknown } = {},
  ) {
    super(message, options)
    this.retryable = options.retryable ?? true
    if (options.retryAfterMs !== undefined) this.retryAfterMs = options.retryAfterMs
  }
}
