/** HMAC-SHA256 signing and constant-time comparison on Web Crypto (no Node imports). */
import { toHex } from './hex'

const encoder = new TextEncoder()
const keyCache = new Map<string, Promise<CryptoKey>>()

function importKey(secret: string): Promise<CryptoKey> {
  let key = keyCache.get(secret)
  if (!key) {
    key = crypto.subtle.importKey(
      'raw',
      encoder.encode(secret),
      { name: 'HMAC', hash: 'SHA-256' },
      false,
      ['sign'],
    )
    // A handful of secrets per deployment; bound it anyway.
    if (keyCache.size > 16) keyCache.clear()
    keyCache.set(secret, key)
  }
  return key
}

/** Lower-case hex HMAC-SHA256 of `message` under `secret`. */
export async function hmacHex(secret: string, message: string): Promise<string> {
  const sig = await crypto.subtle.sign('HMAC', await importKey(secret), encoder.encode(message))
  return toHex(new Uint8Array(sig))
}

/**
 * Compares two strings in time that depends only on their lengths, never on where they differ.
 * Different lengths still walk the longer string so the comparison does not return early.
 */
export function timingSafeEqual(a: string, b: string): boolean {
  const ab = encoder.encode(a)
  const bb = encoder.encode(b)
  const len = Math.max(ab.length, bb.length)
  let diff = ab.length ^ bb.length
  for (let i = 0; i < len; i++) diff |= (ab[i] ?? 0) ^ (bb[i] ?? 0)
  return diff === 0
}

/**
 * The edgeloop signature header, used in both directions with two schemes that cannot stand in
 * for each other: inbound webhooks sign `{timestamp}.{body}` under `v1=`; outbound
 * callbacks sign `edgeloop-callback.{timestamp}.{body}` under `c1=`. An inbound timestamp must be
 * digits, so no callback's signed string can ever equal an inbound one.
 */
export const SIGNATURE_HEADER = 'X-Edgeloop-Signature'
export const TIMESTAMP_HEADER = 'X-Edgeloop-Timestamp'
export const REPLAY_WINDOW_SECONDS = 300
export const CALLBACK_SIGNATURE_PREFIX = 'c1='
const CALLBACK_LABEL = 'edgeloop-callback'

/** Inbound webhook: `v1=<hex HMAC-SHA256 of "{timestamp}.{body}">`. */
export async function signBody(secret: string, timestamp: number, body: string): Promise<string> {
  return `v1=${await hmacHex(secret, `${timestamp}.${body}`)}`
}

/** Outbound callback: `c1=<hex HMAC-SHA256 of "edgeloop-callback.{timestamp}.{body}">`. */
export async function signCallbackBody(
  secret: string,
  timestamp: number,
  body: string,
): Promise<string> {
  return `${CALLBACK_SIGNATURE_PREFIX}${await hmacHex(secret, `${CALLBACK_LABEL}.${timestamp}.${body}`)}`
}

/** Checks a signed body: a fresh timestamp (either direction) and a matching signature. */
export async function verifySignedBody(input: {
  secret: string
  timestamp: string | null
  signature: string | null
  body: string
  nowSeconds: number
}): Promise<{ ok: true } | { ok: false; reason: string }> {
  if (!input.timestamp || !input.signature) {
    return { ok: false, reason: `missing ${TIMESTAMP_HEADER} or ${SIGNATURE_HEADER} header` }
  }
  if (!/^\d{1,12}$/.test(input.timestamp))
    return { ok: false, reason: `${TIMESTAMP_HEADER} must be unix seconds` }
  const skew = Math.abs(input.nowSeconds - Number(input.timestamp))
  if (skew > REPLAY_WINDOW_SECONDS) {
    return {
      ok: false,
      reason: `timestamp is ${skew}s from the server clock (allowed ${REPLAY_WINDOW_SECONDS}s)`,
    }
  }
  if (input.signature.startsWith(CALLBACK_SIGNATURE_PREFIX)) {
    return {
      ok: false,
      reason:
        'this is a callback signature (c1=), which edgeloop sends and never accepts; sign webhooks with v1=',
    }
  }
  const expected = await signBody(input.secret, Number(input.timestamp), input.body)
  if (!timingSafeEqual(expected, input.signature))
    return { ok: false, reason: 'signature does not match' }
  return { ok: true }
}
