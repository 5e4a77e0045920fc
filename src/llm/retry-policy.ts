/**
 * What the `openai` client's own retry loop will do after a failed attempt (its `shouldRetry` and
 * `retryRequest`), read ahead so the adapter can stop it from starting a wait the run's time
 * budget cannot pay for. The client does the retrying; this only predicts it.
 */

/** The client's first backoff and its cap (exponential, with up to 25 % jitter taken off). */
export const RETRY_BASE_MS = 500
export const RETRY_CAP_MS = 8_000

/** Whether the client retries this response (given retries left): its `shouldRetry` rule. */
export function clientRetries(res: Response): boolean {
  const hint = res.headers.get('x-should-retry')
  if (hint === 'true') return true
  if (hint === 'false') return false
  return res.status === 408 || res.status === 409 || res.status === 429 || res.status >= 500
}

/**
 * The longest the client waits before retry number `retry` (0 = the first): the wait the provider
 * asked for (`retry-after-ms`, else `Retry-After` seconds or date), else its backoff ceiling.
 */
export function clientWaitMs(headers: Headers, retry: number, now: number): number {
  return retryAfterMs(headers, now) ?? Math.min(RETRY_CAP_MS, RETRY_BASE_MS * 2 ** retry)
}

/** `retry-after-ms`, else `Retry-After` as seconds or an HTTP date; undefined when unreadable. */
export function retryAfterMs(headers: Headers | undefined, now: number): number | undefined {
  const ms = Number.parseFloat(headers?.get('retry-after-ms') ?? '')
  if (Number.isFinite(ms) && ms >= 0) return ms
  const value = headers?.get('retry-after')?.trim()
  if (!value) return undefined
  if (/^\d+(\.\d+)?$/.test(value)) return Number.parseFloat(value) * 1000
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : Math.max(0, date - now)
}
