import type * as zc from 'zod/v4/core'
import { safeParse } from 'zod/v4/core'
import { describeIssues } from '../validation/describe-issues'
import { jsonTextDepth, MAX_JSON_DEPTH } from '../validation/json-walk'
import { ApiError } from './api-error'

export const MAX_BODY_BYTES = 64 * 1024

/**
 * How much of a refused body is read and dropped before the 413 goes out. A client still sending
 * its body when the answer comes early may see its connection closed under it instead of the 413
 * (an HTTP/1.1 client of workerd or `wrangler dev` did, once in several full runs of the suite);
 * read to its end, the body leaves nothing unread on the connection. A body declared larger than
 * this is refused at once: reading it would cost more than the refusal is worth.
 */
export const DRAINED_BODY_BYTES = 1024 * 1024

/** Reads the raw body as text, refusing bodies over `limit` bytes (413) before buffering them. */
export async function readRawBody(req: Request, limit = MAX_BODY_BYTES): Promise<string> {
  const declared = Number(req.headers.get('content-length') ?? '')
  if (Number.isFinite(declared) && declared > limit) {
    if (declared <= DRAINED_BODY_BYTES && req.body) await drain(req.body.getReader(), 0)
    throw tooLarge(limit)
  }
  if (!req.body) return ''
  const reader = req.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    let chunk: ReadableStreamReadResult<Uint8Array>
    try {
      chunk = await reader.read()
    } catch {
      // The client went away mid-body: its fault, not ours, and nothing is left to answer.
      throw new ApiError(
        400,
        'client_disconnected',
        'the client closed the connection before the request body was complete',
      )
    }
    const { done, value } = chunk
    if (done) break
    size += value.byteLength
    if (size > limit) {
      await drain(reader, size)
      throw tooLarge(limit)
    }
    chunks.push(value)
  }
  const bytes = new Uint8Array(size)
  let offset = 0
  for (const c of chunks) {
    bytes.set(c, offset)
    offset += c.byteLength
  }
  try {
    return new TextDecoder('utf-8', { fatal: true } as TextDecoderConstructorOptions).decode(bytes)
  } catch {
    throw new ApiError(400, 'invalid_encoding', 'the request body is not valid UTF-8')
  }
}

/**
 * Reads what is left of a refused body, up to DRAINED_BODY_BYTES in all (`read` so far), then
 * cancels the rest. A client that goes away meanwhile changes nothing: the body is refused anyway.
 */
async function drain(reader: ReadableStreamDefaultReader<Uint8Array>, read: number): Promise<void> {
  try {
    while (read <= DRAINED_BODY_BYTES) {
      const { done, value } = await reader.read()
      if (done) return
      read += value.byteLength
    }
    await reader.cancel()
  } catch {
    // Nothing to do: the answer is the 413 either way.
  }
}

function tooLarge(limit: number): ApiError {
  return new ApiError(413, 'body_too_large', `the request body is over the ${limit}-byte limit`, {
    limit,
  })
}

/**
 * Refuses JSON text nested deeper than MAX_JSON_DEPTH (400 json_too_deep), before anything walks
 * it: a body of a few KB can nest thousands of levels, past what recursive code survives.
 */
export function refuseDeepJson(raw: string): void {
  const depth = jsonTextDepth(raw, MAX_JSON_DEPTH)
  if (depth > MAX_JSON_DEPTH) {
    throw new ApiError(
      400,
      'json_too_deep',
      `the body nests deeper than ${MAX_JSON_DEPTH} levels of objects and arrays; send flatter JSON`,
      { maxDepth: MAX_JSON_DEPTH },
    )
  }
}

/** Parses a JSON body and validates it against `schema`; every problem is listed in details. */
export function parseJsonBody<S extends zc.$ZodType>(
  raw: string,
  schema: S,
  contentType: string | null,
  options: { emptyAs?: unknown } = {},
): zc.output<S> {
  let value: unknown
  if (!raw.trim() && options.emptyAs !== undefined) {
    value = options.emptyAs
  } else {
    if (contentType && !/^application\/json\b/i.test(contentType)) {
      throw new ApiError(
        415,
        'unsupported_media_type',
        `send JSON with Content-Type: application/json (got ${contentType})`,
      )
    }
    refuseDeepJson(raw)
    try {
      value = JSON.parse(raw)
    } catch (err) {
      throw new ApiError(
        400,
        'malformed_json',
        `the body is not valid JSON: ${(err as Error).message}`,
      )
    }
  }
  const parsed = safeParse(schema, value)
  if (!parsed.success) {
    const problems = describeIssues(parsed.error.issues, value)
    throw new ApiError(
      400,
      'invalid_request',
      `the request body is invalid: ${problems.join('; ')}`,
      {
        problems: parsed.error.issues.map((issue, i) => ({
          path: issue.path.map(String),
          problem: problems[i],
        })),
      },
    )
  }
  return parsed.data
}
