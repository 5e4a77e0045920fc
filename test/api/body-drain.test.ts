/**
 * A body refused for its size is read to its end before the 413 (up to DRAINED_BODY_BYTES), so
 * the client, still sending it, gets the answer rather than a connection closed under it; a body
 * declared larger than that is refused without being read.
 */
import { describe, expect, it } from 'vitest'
import { DRAINED_BODY_BYTES, MAX_BODY_BYTES, readRawBody } from '../../src/routes/body'
import { ApiError } from '../../src/routes/api-error'

const CHUNK = 16 * 1024

/** A request whose body is `total` bytes in 16 KiB chunks, with what was pulled counted. */
function countedRequest(total: number, declare: boolean) {
  const seen = { bytes: 0, ended: false, cancelled: false }
  const body = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (seen.bytes >= total) {
          seen.ended = true
          controller.close()
          return
        }
        const n = Math.min(CHUNK, total - seen.bytes)
        seen.bytes += n
        controller.enqueue(new Uint8Array(n).fill(120))
      },
      cancel() {
        seen.cancelled = true
      },
    },
    { highWaterMark: 0 },
  )
  const headers: Record<string, string> = { 'content-type': 'application/json' }
  if (declare) headers['content-length'] = String(total)
  const req = new Request('https://edgeloop.test/v1/runs', {
    method: 'POST',
    headers,
    body,
    duplex: 'half',
  } as RequestInit)
  return { req, seen }
}

async function refusal(req: Request): Promise<ApiError> {
  const err = await readRawBody(req).then(
    () => null,
    (e: unknown) => e,
  )
  expect(err).toBeInstanceOf(ApiError)
  return err as ApiError
}

describe('a body over the limit', () => {
  it('declared over the limit: read to its end, then refused with 413 body_too_large', async () => {
    const { req, seen } = countedRequest(MAX_BODY_BYTES + 10_000, true)
    const err = await refusal(req)
    expect(err.status).toBe(413)
    expect(err.code).toBe('body_too_large')
    expect(seen).toMatchObject({ bytes: MAX_BODY_BYTES + 10_000, ended: true })
  })

  it('undeclared (chunked), found over the limit while reading: read to its end too', async () => {
    const { req, seen } = countedRequest(3 * MAX_BODY_BYTES, false)
    const err = await refusal(req)
    expect(err.status).toBe(413)
    expect(seen).toMatchObject({ bytes: 3 * MAX_BODY_BYTES, ended: true })
  })

  it('declared larger than what is drained: refused at once, nothing read', async () => {
    const { req, seen } = countedRequest(DRAINED_BODY_BYTES + 1, true)
    const err = await refusal(req)
    expect(err.status).toBe(413)
    expect(seen.bytes).toBe(0)
  })

  it('undeclared and endless: read up to what is drained, then cancelled', async () => {
    const { req, seen } = countedRequest(Number.MAX_SAFE_INTEGER, false)
    const err = await refusal(req)
    expect(err.status).toBe(413)
    expect(seen.bytes).toBeGreaterThan(DRAINED_BODY_BYTES)
    expect(seen.bytes).toBeLessThanOrEqual(DRAINED_BODY_BYTES + 2 * CHUNK)
    expect(seen.cancelled).toBe(true)
  })
})
