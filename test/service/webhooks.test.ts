/**
 * Webhook signatures are usable once and never interchangeable with callback signatures; an
 * idempotency key belongs to the caller that sent it.
 */
import { describe, expect, it } from 'vitest'
import { reply } from '../fakes/fake-openai'
import {
  api,
  drainAlarms,
  getRun,
  hmacHex,
  postJson,
  RECEIVER,
  startRun,
  useServiceFakes,
  WEBHOOK_SECRET,
} from './harness'

const fakes = useServiceFakes()

const STARTER = { authorization: 'Bearer test-starter-token', 'content-type': 'application/json' }

async function signedHeaders(body: string, ts = Math.floor(Date.now() / 1000)) {
  return {
    'content-type': 'application/json',
    'X-Edgeloop-Timestamp': String(ts),
    'X-Edgeloop-Signature': `v1=${await hmacHex(WEBHOOK_SECRET, `${ts}.${body}`)}`,
  }
}

const send = (body: string, headers: Record<string, string>) =>
  api('/v1/runs', { method: 'POST', headers, body })

describe('a webhook signature is usable once', () => {
  it('a captured request replayed with new Idempotency-Key headers starts no second run', async () => {
    const body = JSON.stringify({ task: 'Captured webhook', tools: ['calculator'] })
    const captured = await signedHeaders(body)
    const first = await send(body, captured)
    expect(first.status).toBe(202)
    const { id } = (await first.json()) as { id: string }
    for (const key of ['replay-1', 'replay-2', 'replay-3']) {
      const replay = await send(body, { ...captured, 'Idempotency-Key': key })
      expect(replay.status).toBe(200)
      expect(await replay.json()).toMatchObject({ id, created: false })
    }
    // The key a replay adds names no run of its own either.
    const withKey = await send(body, { ...captured, 'Idempotency-Key': 'replay-1' })
    expect(await withKey.json()).toMatchObject({ id, created: false })
  })

  it('a fresh signature of the same body is a new delivery and a new run', async () => {
    const body = JSON.stringify({ task: 'Twice on purpose' })
    const ts = Math.floor(Date.now() / 1000)
    const a = await send(body, await signedHeaders(body, ts))
    const b = await send(body, await signedHeaders(body, ts - 1))
    expect([a.status, b.status]).toEqual([202, 202])
    const [ra, rb] = [(await a.json()) as { id: string }, (await b.json()) as { id: string }]
    expect(ra.id).not.toBe(rb.id)
  })
})

describe('idempotency keys are scoped per caller', () => {
  it('two tokens using the same key get two runs; neither learns the other’s run', async () => {
    const mine = await postJson('/v1/runs', { task: 'Mine' }, { 'Idempotency-Key': 'shared-7' })
    const theirs = await api('/v1/runs', {
      method: 'POST',
      headers: { ...STARTER, 'Idempotency-Key': 'shared-7' },
      body: JSON.stringify({ task: 'Theirs' }),
    })
    expect([mine.status, theirs.status]).toEqual([202, 202])
    const a = (await mine.json()) as { id: string }
    const b = (await theirs.json()) as { id: string }
    expect(a.id).not.toBe(b.id)
    expect((await getRun(a.id)).task).toBe('Mine')
    expect((await getRun(b.id)).task).toBe('Theirs')
    expect((await getRun(b.id)).requestedBy).toBe('starter')
  })

  it('a webhook sender cannot claim an API caller’s key or learn its run from a 409', async () => {
    const api1 = await postJson('/v1/runs', { task: 'Deploy 42' }, { 'Idempotency-Key': 'dep-42' })
    const { id } = (await api1.json()) as { id: string }
    const body = JSON.stringify({ task: 'Something else' })
    const res = await send(body, { ...(await signedHeaders(body)), 'Idempotency-Key': 'dep-42' })
    expect(res.status).toBe(202)
    const json = (await res.json()) as { id: string }
    expect(json.id).not.toBe(id)
    expect(JSON.stringify(json)).not.toContain(id)
    expect((await getRun(id)).task).toBe('Deploy 42')
  })

  it('the same caller reusing its key for another request still gets the 409', async () => {
    await postJson('/v1/runs', { task: 'One' }, { 'Idempotency-Key': 'k-own' })
    const again = await postJson('/v1/runs', { task: 'Two' }, { 'Idempotency-Key': 'k-own' })
    expect(again.status).toBe(409)
  })
})

describe('callbacks and webhooks cannot pass for each other', () => {
  const CALLBACK = `https://${RECEIVER}/hooks/edgeloop`

  it('a received callback, replayed to POST /v1/runs, is refused (401)', async () => {
    fakes.ai.enqueue(reply.text('Done.'))
    const id = await startRun({ task: 'Check', tools: ['calculator'], callback_url: CALLBACK })
    await drainAlarms(id)
    const hit = fakes.receiver.hits[0]!
    expect(hit.headers.get('x-edgeloop-signature')).toMatch(/^c1=[0-9a-f]{64}$/)
    const replay = await send(hit.body, {
      'content-type': 'application/json',
      'X-Edgeloop-Timestamp': hit.headers.get('x-edgeloop-timestamp')!,
      'X-Edgeloop-Signature': hit.headers.get('x-edgeloop-signature')!,
    })
    expect(replay.status).toBe(401)
    expect(await replay.json()).toMatchObject({ error: { code: 'invalid_signature' } })
  })

  it.each([
    [
      'c1= over the callback string',
      'c1=',
      (ts: number, b: string) => `edgeloop-callback.${ts}.${b}`,
    ],
    [
      'v1= over the callback string',
      'v1=',
      (ts: number, b: string) => `edgeloop-callback.${ts}.${b}`,
    ],
    ['c1= over the inbound string', 'c1=', (ts: number, b: string) => `${ts}.${b}`],
  ])('a start request signed %s is refused', async (_label, prefix, signed) => {
    const body = JSON.stringify({ task: 'Forged from a callback' })
    const ts = Math.floor(Date.now() / 1000)
    const res = await send(body, {
      'content-type': 'application/json',
      'X-Edgeloop-Timestamp': String(ts),
      'X-Edgeloop-Signature': `${prefix}${await hmacHex(WEBHOOK_SECRET, signed(ts, body))}`,
    })
    expect(res.status).toBe(401)
  })

  it('a callback is not signed like an inbound webhook of the same bytes', async () => {
    fakes.ai.enqueue(reply.text('Done.'))
    const id = await startRun({ task: 'Check', tools: ['calculator'], callback_url: CALLBACK })
    await drainAlarms(id)
    const hit = fakes.receiver.hits[0]!
    const ts = hit.headers.get('x-edgeloop-timestamp')!
    const inbound = `v1=${await hmacHex(WEBHOOK_SECRET, `${ts}.${hit.body}`)}`
    const callback = hit.headers.get('x-edgeloop-signature')!
    expect(callback).not.toBe(inbound)
    // What a receiver checks (docs/http-api.md, "Callbacks"): the c1 scheme with the direction label.
    expect(callback).toBe(
      `c1=${await hmacHex(WEBHOOK_SECRET, `edgeloop-callback.${ts}.${hit.body}`)}`,
    )
    // So an inbound webhook's v1 header, shown to a receiver, never verifies as a callback.
    expect(inbound.startsWith('c1=')).toBe(false)
  })
})
