import { hmacHex, timingSafeEqual } from '../security/hmac'
import { SHA256_HEX_PATTERN } from '../validation/patterns'

/** Slack rejects replays older than five minutes; we apply the same window in both directions. */
export const SLACK_MAX_SKEW_SECONDS = 300

export interface SlackRequestToVerify {
  signingSecret: string
  /** `X-Slack-Request-Timestamp`, as sent. */
  timestamp: string | null
  /** `X-Slack-Signature`, as sent. */
  signature: string | null
  /** The body exactly as received, before any parsing. */
  rawBody: string
  nowSeconds: number
}

export type SlackVerification = { ok: true } | { ok: false; reason: string }

/** Check Slack's request signature (`v0=` HMAC-SHA256 of `v0:{timestamp}:{raw body}`). */
export async function verifySlackRequest(input: SlackRequestToVerify): Promise<SlackVerification> {
  const { signingSecret, timestamp, signature, rawBody, nowSeconds } = input
  if (!signingSecret) {
    return fail('SLACK_SIGNING_SECRET is not configured; set it with wrangler secret put')
  }
  if (!timestamp) return fail('missing X-Slack-Request-Timestamp header')
  if (!signature) return fail('missing X-Slack-Signature header')
  if (!/^\d{1,12}$/.test(timestamp)) {
    return fail('X-Slack-Request-Timestamp is not a number of seconds')
  }
  const skew = nowSeconds - Number(timestamp)
  if (skew > SLACK_MAX_SKEW_SECONDS) {
    return fail(`request timestamp is ${skew} s old (limit ${SLACK_MAX_SKEW_SECONDS} s): replayed?`)
  }
  if (-skew > SLACK_MAX_SKEW_SECONDS) {
    return fail(
      `request timestamp is ${-skew} s in the future (limit ${SLACK_MAX_SKEW_SECONDS} s): check the clock`,
    )
  }
  if (!signature.startsWith('v0=')) {
    return fail('X-Slack-Signature does not use the v0 scheme')
  }
  const hex = signature.slice(3)
  if (hex.length !== 64) return fail('X-Slack-Signature has the wrong length')
  // Slack sends lowercase hex; anything else is not a signature it produced.
  if (!SHA256_HEX_PATTERN.test(hex)) return fail('X-Slack-Signature is not lowercase hex')

  const expected = await hmacHex(signingSecret, `v0:${timestamp}:${rawBody}`)
  if (!timingSafeEqual(hex, expected)) {
    return fail('X-Slack-Signature does not match: wrong signing secret or modified body')
  }
  return { ok: true }
}

function fail(reason: string): SlackVerification {
  return { ok: false, reason }
}
