import { DeliveryError } from '../errors/delivery-error'

/** A Slack Web API call failed. `retryable` says whether trying again later may succeed. */
export class SlackApiError extends DeliveryError {
  override name = 'SlackApiError'
  constructor(
    message: string,
    readonly details: {
      /** Web API method, e.g. `chat.postMessage`. */
      method: string
      /** Slack's `error` code (`channel_not_found`) or ours (`http_503`, `network`, `bad_response`). */
      code: string
      retryable: boolean
      status?: number
      /** Seconds Slack asked us to wait, on a rate limit we did not wait out. */
      retryAfterSeconds?: number
    },
    options: { cause?: unknown } = {},
  ) {
    super(message, {
      retryable: details.retryable,
      retryAfterMs: details.retryAfterSeconds ? details.retryAfterSeconds * 1000 : undefined,
      cause: options.cause,
    })
  }
}
