/**
 * `GET /v1/runs/stream`: the run list's changes as they reach the index, through the Worker's
 * fetch. A run started by another request appears on an open stream within a second of its
 * index write; streams resume after Last-Event-ID, are bounded (429 with Retry-After) and show
 * only what the token may see.
 */
import { env } from 'cloudflare:workers'
import { describe, expect, it } from 'vitest'
import { sseFrames, type SseFrame } from '../../src/client/sse-frames'
import type { RunListEventBody } from '../../src/api/response-schemas'
import { runListHub } from '../../src/runs/index/run-list-hub-name'
import { reply } from '../fakes/fake-openai'
import {
  api,
  AUTH,
  drainAlarms,
  hmacHex,
  JSON_AUTH,
  startAwaitingApproval,
  startRun,
  receiverPost,
  useServiceFakes,
  WEBHOOK_SECRET,
} from '../service/harness'
import { fetchWith } from '../service/worker-with'

const fakes = useServiceFakes()

interface Frame extends SseFrame {
  body: RunListEventBody
  /** performance.now() when the frame was read. */
  at: number
}

/** A run-list stream read frame by frame in the background (the client's SSE parser). */
function watch(res: Response) {
  expect(res.status).toBe(200)
  expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/)
  const frames: Frame[] = []
  const source = res.body!.getReader()
  let closed = false
  // The parser reads its own stream, so closing cancels the response's reader underneath it.
  const parsed = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await source.read()
      if (done) controller.close()
      else controller.enqueue(value)
    },
  })
  const done = (async () => {
    for await (const f of sseFrames(parsed)) {
      frames.push({ ...f, body: JSON.parse(f.data) as RunListEventBody, at: performance.now() })
    }
  })()
    .catch(() => {})
    .finally(() => {
      closed = true
    })
  return {
    frames,
    /** Waits up to `ms` for a frame that `match` accepts. */
    async next(match: (f: Frame) => boolean, ms = 3_000): Promise<Frame> {
      for (let waited = 0; ; waited += 10) {
        const found = frames.find(match)
        if (found) return found
        if (closed || waited > ms) {
          throw new Error(`no such frame in ${JSON.stringify(frames.map((f) => f.data))}`)
        }
        await new Promise((r) => setTimeout(r, 10))
      }
    },
    async close() {
      await source.cancel().catch(() => {})
      await done
    },
  }
}

const open = (headers: Record<string, string> = AUTH) => api('/v1/runs/stream', { headers })
const isRun = (id: string, status?: string) => (f: Frame) =>
  f.body.type === 'run' && f.body.run.id === id && (!status || f.body.run.status === status)

describe('GET /v1/runs/stream', () => {
  it('a run started by another request appears within a second of its index write', async () => {
    const stream = watch(await open())
    const ready = await stream.next((f) => f.body.type === 'ready')
    expect(ready.id).toMatch(/^[0-9a-f]{8}-\d+$/)

    fakes.ai.enqueue(reply.text('Done.'))
    const res = await api('/v1/runs', {
      method: 'POST',
      headers: JSON_AUTH,
      body: JSON.stringify({ task: 'Count the sheep', tools: ['calculator'] }),
    })
    const { id } = (await res.json()) as { id: string }
    await drainAlarms(id)
    // The index is written by the run's last delivery: drainAlarms returns after it.
    const written = performance.now()
    const finished = await stream.next(isRun(id, 'succeeded'))
    expect(finished.at - written).toBeLessThan(1_000)
    expect(finished.event).toBe('run')
    // The row as GET /v1/runs lists it.
    const listed = (await (await api('/v1/runs?limit=100', { headers: AUTH })).json()) as {
      items: { id: string }[]
    }
    expect(finished.body).toEqual({
      type: 'run',
      run: listed.items.find((r) => r.id === id),
      approvals: [],
    })
    await stream.close()
  })

  it('carries pending approvals as the inbox lists them, and deletions', async () => {
    const stream = watch(await open())
    await stream.next((f) => f.body.type === 'ready')
    fakes.ai.enqueue(reply.toolCalls([receiverPost('/list-stream', { n: 1 })]))
    const { id } = await startAwaitingApproval()
    const waiting = await stream.next(isRun(id, 'awaiting_approval'))
    const inbox = (await (await api('/v1/approvals?limit=100', { headers: AUTH })).json()) as {
      items: { runId: string }[]
    }
    expect(waiting.body.type === 'run' && waiting.body.approvals).toEqual(
      inbox.items.filter((a) => a.runId === id),
    )
    expect((await api(`/v1/runs/${id}`, { method: 'DELETE', headers: AUTH })).status).toBe(200)
    await drainAlarms(id)
    const gone = await stream.next((f) => f.body.type === 'run_deleted' && f.body.id === id)
    expect(gone.event).toBe('run_deleted')
    await stream.close()
  })

  it('resumes after Last-Event-ID with what was missed; an unknown position says to list again', async () => {
    const first = watch(await open())
    const ready = await first.next((f) => f.body.type === 'ready')
    await first.close()

    fakes.ai.enqueue(reply.text('Done.'))
    const id = await startRun({ task: 'While away', tools: ['calculator'] })
    await drainAlarms(id)

    const resumed = watch(await open({ ...AUTH, 'Last-Event-ID': ready.id! }))
    await resumed.next(isRun(id, 'succeeded'))
    const caughtUp = await resumed.next((f) => f.body.type === 'ready')
    expect(caughtUp.body).toEqual({ type: 'ready', relist: false })
    await resumed.close()

    const stale = watch(await open({ ...AUTH, 'Last-Event-ID': '00000000-5' }))
    expect((await stale.next((f) => f.body.type === 'ready')).body).toEqual({
      type: 'ready',
      relist: true,
    })
    expect(stale.frames.filter((f) => f.body.type !== 'ready')).toEqual([])
    await stale.close()
  })

  it('refuses a Last-Event-ID it did not make', async () => {
    const res = await open({ ...AUTH, 'Last-Event-ID': '41' })
    expect(res.status).toBe(400)
    expect(await res.json()).toMatchObject({ error: { code: 'invalid_after' } })
  })

  it('needs a token with runs:read: none is 401, a webhook signature 403', async () => {
    expect((await api('/v1/runs/stream')).status).toBe(401)
    const ts = String(Math.floor(Date.now() / 1000))
    const signed = await api('/v1/runs/stream', {
      headers: {
        'X-Edgeloop-Timestamp': ts,
        'X-Edgeloop-Signature': `v1=${await hmacHex(WEBHOOK_SECRET, `${ts}.`)}`,
      },
    })
    expect(signed.status).toBe(403)
    const reader = await api('/v1/runs/stream', {
      headers: { authorization: 'Bearer test-reader-token' },
    })
    expect(reader.status).toBe(200)
    await reader.body!.cancel()
  })

  it('is bounded per token and per deployment: 429 with Retry-After, nothing kept once closed', async () => {
    const hub = runListHub(env.RUN_LIST)
    const before = await hub.openStreams()
    const settings = { EVENT_STREAMS_PER_TOKEN: '2', RUN_LIST_STREAMS: String(before + 3) }
    const get = (token: string) =>
      fetchWith(settings, '/v1/runs/stream', { headers: { authorization: `Bearer ${token}` } })
    const mine = [await get('test-token'), await get('test-token')]
    for (const res of mine) expect(res.status).toBe(200)
    const perToken = await get('test-token')
    expect(perToken.status).toBe(429)
    expect(Number(perToken.headers.get('Retry-After'))).toBeGreaterThan(0)
    expect(await perToken.json()).toMatchObject({
      error: { code: 'too_many_streams', details: { scope: 'token', limit: 2 } },
    })
    const other = await get('test-reader-token')
    expect(other.status).toBe(200)
    const full = await get('test-starter-token')
    expect(full.status).toBe(429)
    expect(await full.json()).toMatchObject({
      error: { code: 'too_many_streams', details: { scope: 'deployment', limit: before + 3 } },
    })
    for (const res of [...mine, other]) await res.body!.cancel()
    for (let i = 0; i < 100 && (await hub.openStreams()) > before; i++) {
      await new Promise((r) => setTimeout(r, 20))
    }
    expect(await hub.openStreams()).toBe(before)
  })

  it('shows a token limited to its own runs only those, their deletion included', async () => {
    const ALPHA = { authorization: 'Bearer test-alpha-token' }
    const BETA = { authorization: 'Bearer test-beta-token' }
    const [all, alpha, beta] = [
      watch(await open()),
      watch(await open(ALPHA)),
      watch(await open(BETA)),
    ]
    for (const s of [all, alpha, beta]) await s.next((f) => f.body.type === 'ready')

    fakes.ai.enqueue(reply.text('Not yours.'), reply.text('Yours.'))
    const others = await startRun({ task: 'Started by api', tools: ['calculator'] })
    await drainAlarms(others)
    const res = await api('/v1/runs', {
      method: 'POST',
      headers: { ...ALPHA, 'content-type': 'application/json' },
      body: JSON.stringify({ task: 'Started by alpha', tools: ['calculator'] }),
    })
    const { id: mine } = (await res.json()) as { id: string }
    await drainAlarms(mine)
    await alpha.next(isRun(mine, 'succeeded'))
    await all.next(isRun(mine, 'succeeded'))
    await all.next(isRun(others, 'succeeded'))
    expect(alpha.frames.some(isRun(others))).toBe(false)

    expect((await api(`/v1/runs/${mine}`, { method: 'DELETE', headers: ALPHA })).status).toBe(200)
    await drainAlarms(mine)
    const gone = (f: Frame) => f.body.type === 'run_deleted' && f.body.id === mine
    await alpha.next(gone)
    await all.next(gone)
    // beta was sent nothing of either run, while the others got all of theirs.
    expect(beta.frames.map((f) => f.body.type)).toEqual(['ready'])
    for (const s of [all, alpha, beta]) await s.close()
  })
})
