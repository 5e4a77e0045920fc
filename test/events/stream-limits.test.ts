/**
 * Event streams are bounded (docs/limits.md): streams per run and per token, a 429 with
 * Retry-After beyond them,
 * one shared copy of each event for every live subscriber, and nothing kept once a stream ends.
 */
import { runInDurableObject } from 'cloudflare:test'
import { describe, expect, it } from 'vitest'
import type { RunStore } from '../../src/runs/run-store'
import { reply } from '../fakes/fake-openai'
import {
  AUTH,
  decide,
  drainAlarms,
  receiverPost,
  startAwaitingApproval,
  startRun,
  stubOf,
  useServiceFakes,
} from '../service/harness'
import { fetchWith } from '../service/worker-with'
import { kinds, readSse } from './sse'

/** Milliseconds the model takes to answer: live writes are coalesced within FLUSH_MS. */
let modelDelayMs = 0
const fakes = useServiceFakes({
  hosts: ({ ai }) => ({
    'api.openai.test': async (request) => {
      await new Promise((r) => setTimeout(r, modelDelayMs))
      return ai.handler(request)
    },
  }),
})

const READER = { authorization: 'Bearer test-reader-token' }
const LIMITS = { EVENT_STREAMS_PER_RUN: '4', EVENT_STREAMS_PER_TOKEN: '3' }

function open(
  id: string,
  headers: Record<string, string> = AUTH,
  settings: Record<string, string> = LIMITS,
) {
  return fetchWith(settings, `/v1/runs/${id}/events`, { headers })
}

async function openStreams(id: string): Promise<number> {
  return runInDurableObject(stubOf(id), (instance) => (instance as RunStore).openStreams())
}

/** Polls until the run's object counts `n` open streams (closing reaches it asynchronously). */
async function streamsReach(id: string, n: number): Promise<void> {
  for (let i = 0; i < 100 && (await openStreams(id)) !== n; i++) {
    await new Promise((r) => setTimeout(r, 20))
  }
  expect(await openStreams(id)).toBe(n)
}

async function pendingRun(): Promise<string> {
  fakes.ai.enqueue(reply.toolCalls([receiverPost('/limits', { n: 1 })]))
  return (await startAwaitingApproval()).id
}

describe('open streams per token', () => {
  it('a token beyond EVENT_STREAMS_PER_TOKEN gets a 429 with Retry-After; others still open', async () => {
    const id = await pendingRun()
    const streams = await Promise.all([open(id), open(id), open(id)])
    for (const res of streams) expect(res.status).toBe(200)
    const refused = await open(id)
    expect(refused.status).toBe(429)
    expect(Number(refused.headers.get('Retry-After'))).toBeGreaterThan(0)
    expect(refused.headers.get('content-type')).toMatch(/application\/json/)
    expect(await refused.json()).toMatchObject({
      error: { code: 'too_many_streams', details: { scope: 'token', limit: 3 } },
    })
    const other = await open(id, READER)
    expect(other.status).toBe(200)
    await Promise.all([...streams, other].map((r) => r.body!.cancel()))
    await streamsReach(id, 0)
  })
})

describe('open streams per run', () => {
  it('beyond EVENT_STREAMS_PER_RUN every token gets a 429, until a stream closes', async () => {
    const id = await pendingRun()
    const streams = [await open(id), await open(id), await open(id), await open(id, READER)]
    for (const res of streams) expect(res.status).toBe(200)
    const refused = await open(id, READER)
    expect(refused.status).toBe(429)
    expect(refused.headers.get('Retry-After')).toMatch(/^\d+$/)
    expect(await refused.json()).toMatchObject({
      error: { code: 'too_many_streams', details: { scope: 'run', limit: 4 } },
    })
    // A client that goes away gives its slot back: the run counts it no more.
    await streams[0]!.body!.cancel()
    await streamsReach(id, 3)
    const again = await open(id, READER)
    expect(again.status).toBe(200)
    await Promise.all([...streams.slice(1), again].map((r) => r.body!.cancel()))
    await streamsReach(id, 0)
  })
})

describe('many live subscribers', () => {
  it('60 streams get the same bytes, every event once, and all are let go when the run ends', async () => {
    fakes.ai.enqueue(
      reply.toolCalls([{ id: 'c1', name: 'calculator', arguments: { expression: '6 * 7' } }], {
        content: 'Compute.',
      }),
      reply.toolCalls([receiverPost('/fan-out', { value: 42 })], { content: 'Record it.' }),
      reply.text('Recorded 42.'),
    )
    const id = await startRun({ task: 'Compute and record', tools: ['calculator', 'http_post'] })
    const many = { EVENT_STREAMS_PER_RUN: '60', EVENT_STREAMS_PER_TOKEN: '60' }
    const responses = await Promise.all(Array.from({ length: 60 }, () => open(id, AUTH, many)))
    for (const res of responses) expect(res.status).toBe(200)
    const texts = responses.map((r) => r.text())
    await drainAlarms(id)
    const pending = (await (await fetchWith({}, `/v1/runs/${id}`, { headers: AUTH })).json()) as {
      pendingApprovals: { callId: string; argsHash: string }[]
    }
    const call = pendingApprovals(pending)
    expect(
      (await decide(id, call.callId, { decision: 'approve', args_hash: call.argsHash })).status,
    ).toBe(200)
    await drainAlarms(id)
    const bodies = await Promise.all(texts)
    const first = bodies[0]!
    for (const body of bodies) expect(body).toBe(first)
    const events = await readSse(new Response(first)).toEnd()
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1))
    expect(events.at(-1)!.type).toBe('run_finished')
    await streamsReach(id, 0)
  })
})

describe('a reader that falls behind', () => {
  it('is closed with a stream_closed frame and resumes with Last-Event-ID, missing nothing', async () => {
    // Thirty steps of 8,000-character thoughts: about 250 KB of events for a 16 KiB queue.
    const thought = (i: number) => `Step ${i}: ${'why '.repeat(2_000)}`
    for (let i = 0; i < 30; i++) {
      fakes.ai.enqueue(
        reply.toolCalls(
          [{ id: `c${i}`, name: 'calculator', arguments: { expression: `${i} + 1` } }],
          {
            content: thought(i),
          },
        ),
      )
    }
    fakes.ai.enqueue(reply.text('Counted.'))
    // The fake's default 7-byte writes of 3-character pieces would take seconds per 8,000-character
    // thought (tens of thousands of reads, each crossing the runtime's pipes): this test is about
    // the event stream, so the model streams in larger pieces.
    fakes.ai.pieceChars = 400
    fakes.ai.writeBytes = 16_384
    const id = await startRun({ task: 'Count', tools: ['calculator'], budget: { maxSteps: 35 } })
    // A client behind a slow link: it opens the stream and reads nothing while the run goes on.
    const slow = await open(id, AUTH, { ...LIMITS, EVENT_STREAM_QUEUE_KB: '16' })
    expect(slow.status).toBe(200)
    try {
      // Steps further apart than FLUSH_MS: each is its own write to the stream.
      modelDelayMs = 60
      await drainAlarms(id, 80)
    } finally {
      modelDelayMs = 0
    }
    expect((await fetchWith({}, `/v1/runs/${id}`, { headers: AUTH })).status).toBe(200)
    await streamsReach(id, 0)
    // What it then reads: events in order, then the closing frame, then the end.
    const text = await slow.text()
    const frames = text.split('\n\n').filter(Boolean)
    const closing = frames.at(-1)!
    expect(closing).toMatch(/^event: stream_closed\ndata: /)
    const data = JSON.parse(closing.split('data: ')[1]!) as { reason: string; lastEventId: number }
    expect(data.reason).toBe('slow_reader')
    const got = await readSse(new Response(frames.slice(0, -1).join('\n\n') + '\n\n')).toEnd()
    expect(got.length).toBeGreaterThan(0)
    expect(got.at(-1)!.seq).toBe(data.lastEventId)
    expect(got.map((e) => e.seq)).toEqual(got.map((_, i) => i + 1))
    expect(kinds(got)).not.toContain('run_finished')
    // Resuming where it stopped gives the rest, up to the end: nothing lost, nothing twice.
    const resumed = await open(id, { ...AUTH, 'Last-Event-ID': String(data.lastEventId) })
    const rest = await readSse(resumed).toEnd()
    expect(rest[0]!.seq).toBe(data.lastEventId + 1)
    expect(rest.map((e) => e.seq)).toEqual(rest.map((_, i) => data.lastEventId + 1 + i))
    expect(kinds(rest).at(-1)).toMatch(/:run_finished$/)
    await streamsReach(id, 0)
  })
})

function pendingApprovals(view: { pendingApprovals: { callId: string; argsHash: string }[] }) {
  expect(view.pendingApprovals).toHaveLength(1)
  return view.pendingApprovals[0]!
}
