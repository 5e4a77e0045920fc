import { signCallbackBody, SIGNATURE_HEADER, TIMESTAMP_HEADER } from '../../security/hmac'
import { DeliveryError } from '../../errors/delivery-error'
import { fetchFailureText } from '../../errors/runtime-reference'

export const CALLBACK_TIMEOUT_MS = 10_000

/**
 * POSTs the final RunResult to the run's callback_url, signed with WEBHOOK_SECRET under the
 * callback scheme (never the inbound one, so a received callback is no credential):
 * `X-Edgeloop-Signature: c1=<hex HMAC-SHA256 of "edgeloop-callback.{timestamp}.{body}">`.
 */
export async function deliverCallback(input: {
  url: string
  runId: string
  deliveryId: string
  body: unknown
  secret: string | undefined
  nowMs: number
  /** For run events (`callback_events: "all"`): sent as X-Edgeloop-Event. */
  eventType?: string
}): Promise<{ status: number }> {
  const body = JSON.stringify(input.body)
  const timestamp = Math.floor(input.nowMs / 1000)
  const headers: Record<string, string> = {
    'Content-Type': 'application/json',
    'User-Agent': 'edgeloop-callback/1',
    'X-Edgeloop-Run-Id': input.runId,
    'X-Edgeloop-Delivery': input.deliveryId,
    [TIMESTAMP_HEADER]: String(timestamp),
  }
  if (input.eventType) headers['X-Edgeloop-Event'] = input.eventType
  if (input.secret) {
    headers[SIGNATURE_HEADER] = await signCallbackBody(input.secret, timestamp, body)
  }
  let res: Response
  try {
    res = await fetch(input.url, {
      method: 'POST',
      headers,
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(CALLBACK_TIMEOUT_MS),
    })
  } catch (err) {
    throw new DeliveryError(
      `callback to ${new URL(input.url).host} failed: ${fetchFailureText((err as Error).message)}`,
      { cause: err },
    )
  }
  // Drain the body so the connection is released.
  await res.body?.cancel()
  if (res.status >= 200 && res.status < 300) return { status: res.status }
  const retryAfter = Number(res.headers.get('Retry-After'))
  throw new DeliveryError(`callback to ${new URL(input.url).host} answered HTTP ${res.status}`, {
    retryable: true,
    retryAfterMs: Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter * 1000 : undefined,
  })
}
