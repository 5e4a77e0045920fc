/** When and how long to wait before retrying a model call. */

export const RETRY_BASE_MS = 500
export const RETRY_CAP_MS = 8_000

/** Exponential backoff with full jitter: a random wait in [0, min(cap, base·2^attempt)). */
export function backoffDelayMs(attempt: number, random: () => number = Math.random): number {
  const ceiling = Math.min(RETRY_CAP_MS, RETRY_BASE_MS * 2 ** attempt)
  return Math.floor(random() * ceiling)
}

/**
 * The wait a provider asked for: `retry-after-ms` (milliseconds), else `Retry-After` as seconds or
 * an HTTP date. Undefined when neither header is present or readable.
 */
export function retryAfterMs(headers: Headers | undefined, now: number): number | undefined {
  const ms = Number.parseFloat(headers?.get('retry-after-ms') ?? '')
  if (Number.isFinite(ms) && ms >= 0) return ms
  const value = headers?.get('retry-after')?.trim()
  if (!value) return undefined
  if (/^\d+(\.\d+)?$/.test(value)) return Number.parseFloat(value) * 1000
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : Math.max(0, date - now)
}

/** HTTP statuses worth retrying: request timeout, rate limit and server-side failures. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500
}
