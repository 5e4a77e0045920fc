import type { RequestId } from '@modelcontextprotocol/sdk/types.js'
import { RUN_ID_PATTERN } from '../../kernel/names'
import { hmacHex, timingSafeEqual } from '../../security/hmac'

/**
 * The ids `/mcp` hands out and takes back, signed so that no state is kept for them
 * (docs/serving.md#sessions-and-resumption): an Mcp-Session-Id binds the token that initialized
 * and what its client declared; an SSE event id binds the token, the run a call started, how far
 * into the run's stored events the stream had gone, and the call's JSON-RPC id. Each is
 * `<kind>.<base64url of its JSON>.<HMAC-SHA256>` under the session key, the kind in the signed
 * text so that one can never stand for the other. A forged, altered or another token's id
 * verifies as null: nothing says which part was wrong.
 */

/** An Mcp-Session-Id's content. */
export interface McpSession {
  /** The token's name that initialized; the session is valid only for that token. */
  sub: string
  /** The client declared the elicitation capability (form mode). */
  elicitation: boolean
  /** When initialize issued it (ms since the epoch, to the second). */
  issuedAt: number
}

/** An SSE event id's content: where a call's stream stood. */
export interface CallCursor {
  run: string
  /** The sequence number of the run's last stored event the stream had followed. */
  seq: number
  /** The JSON-RPC id of the tools/call the stream answers. */
  request: RequestId
  /** The call's progress token, if it asked for progress, and the progress sent so far. */
  progressToken?: string | number
  progress: number
}

/** A pending item offered through elicitation: the request id says which item, as it was shown. */
export interface OfferedItem {
  run: string
  call: string
  kind: 'approval' | 'question'
  /** The item's hash when offered: a decision binds to it (docs/human-in-the-loop.md). */
  hash: string
  /** How the form's content maps to the answer: an object schema as is, else `{ answer }`. */
  form: 'decision' | 'object' | 'answer'
}

const SESSION = 's1'
const EVENT = 'e1'
const OFFER = 'q1'
/** Ids past this are not ours: nothing longer is parsed or hashed. */
const MAX_ID_LENGTH = 2_048

export async function sessionId(key: string, session: McpSession): Promise<string> {
  return sign(key, SESSION, {
    sub: session.sub,
    el: session.elicitation ? 1 : 0,
    iat: Math.floor(session.issuedAt / 1000),
  })
}

/**
 * The session `id` holds, if it was signed under `key` for token `caller`; else null. An id
 * signed without an issue time (before sessions expired) holds none: it reads as issued at 0,
 * long expired.
 */
export async function verifySession(
  key: string,
  id: string,
  caller: string,
): Promise<McpSession | null> {
  const body = await verify(key, SESSION, id)
  if (!body || body.sub !== caller) return null
  const iat = Number.isSafeInteger(body.iat) && (body.iat as number) > 0 ? (body.iat as number) : 0
  return { sub: caller, elicitation: body.el === 1, issuedAt: iat * 1000 }
}

export async function eventId(key: string, caller: string, cursor: CallCursor): Promise<string> {
  return sign(key, EVENT, {
    sub: caller,
    run: cursor.run,
    seq: cursor.seq,
    req: cursor.request,
    ...(cursor.progressToken !== undefined ? { pt: cursor.progressToken } : {}),
    pn: cursor.progress,
  })
}

/** The cursor an event id holds, if it was signed under `key` for token `caller`; else null. */
export async function verifyEventId(
  key: string,
  id: string,
  caller: string,
): Promise<CallCursor | null> {
  const body = await verify(key, EVENT, id)
  if (!body || body.sub !== caller) return null
  const { run, seq, req, pt, pn } = body
  if (typeof run !== 'string' || !RUN_ID_PATTERN.test(run)) return null
  if (!Number.isSafeInteger(seq) || (seq as number) < 0) return null
  if (typeof req !== 'string' && typeof req !== 'number') return null
  if (pt !== undefined && typeof pt !== 'string' && typeof pt !== 'number') return null
  if (!Number.isSafeInteger(pn) || (pn as number) < 0) return null
  return {
    run,
    seq: seq as number,
    request: req,
    ...(pt !== undefined ? { progressToken: pt as string | number } : {}),
    progress: pn as number,
  }
}

/** The JSON-RPC id of the elicitation/create that offers `item` to token `caller`. */
export async function offerId(key: string, caller: string, item: OfferedItem): Promise<string> {
  return sign(key, OFFER, { sub: caller, ...item })
}

/** Whether `id` is the shape of an offer's id (then it is answered by elicitation.ts). */
export const isOfferId = (id: unknown): id is string =>
  typeof id === 'string' && id.startsWith(`${OFFER}.`)

/** The item an elicitation's id offered, if it was signed under `key` for `caller`; else null. */
export async function verifyOfferId(
  key: string,
  id: string,
  caller: string,
): Promise<OfferedItem | null> {
  const body = await verify(key, OFFER, id)
  if (!body || body.sub !== caller) return null
  const { run, call, kind, hash, form } = body
  if (typeof run !== 'string' || !RUN_ID_PATTERN.test(run)) return null
  if (typeof call !== 'string' || typeof hash !== 'string') return null
  if (kind !== 'approval' && kind !== 'question') return null
  if (form !== 'decision' && form !== 'object' && form !== 'answer') return null
  return { run, call, kind, hash, form }
}

async function sign(key: string, kind: string, body: Record<string, unknown>): Promise<string> {
  const payload = base64url(JSON.stringify(body))
  return `${kind}.${payload}.${await hmacHex(key, `edgeloop-mcp.${kind}.${payload}`)}`
}

async function verify(
  key: string,
  kind: string,
  id: string,
): Promise<Record<string, unknown> | null> {
  if (id.length > MAX_ID_LENGTH) return null
  const [k, payload, mac, ...rest] = id.split('.')
  if (k !== kind || !payload || !mac || rest.length) return null
  const expected = await hmacHex(key, `edgeloop-mcp.${kind}.${payload}`)
  if (!timingSafeEqual(expected, mac)) return null
  try {
    const body: unknown = JSON.parse(fromBase64url(payload))
    return body && typeof body === 'object' && !Array.isArray(body)
      ? (body as Record<string, unknown>)
      : null
  } catch {
    return null
  }
}

function base64url(text: string): string {
  const bytes = new TextEncoder().encode(text)
  let binary = ''
  for (const b of bytes) binary += String.fromCharCode(b)
  return btoa(binary).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '')
}

function fromBase64url(text: string): string {
  const binary = atob(text.replaceAll('-', '+').replaceAll('_', '/'))
  return new TextDecoder().decode(Uint8Array.from(binary, (c) => c.charCodeAt(0)))
}
