/** A Slack Web API call failed. `retryable` says whether trying again later may succeed. */
export class SlackApiError extends Error {
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
  ) {
    super(message)
  }
}
