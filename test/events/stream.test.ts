/** `GET /v1/runs/:id/events`: one event per change, in order, resumable, live. */
import { evictDurableObject, runInDurableObject } from 'cloudflare:test'
import { describe, expect, it, vi } from 'vitest'
import type { RunEvent } from '../../src/runs/events/events'
import { reply } from '../fakes/fake-openai'
import {
  api,
  AUTH,
  decide,
  drainAlarms,
  getRun,
  getTrace,
  hmacHex,
  postJson,
  RECEIVER,
  startRun,
  stubOf,
  useServiceFakes,
  WEBHOOK_SECRET,
} from '../service/harness'
import { kinds, readSse } from './sse'

const fakes = useServiceFakes()

const TASK = { task: 'Compute and record', tools: ['calculator', 'http_post'] }

/** Step 0: calculator (read-only); step 1: http_post (approval); step 2: the answer. */
function scriptModel(): void {
  fakes.ai.enqueue(
    reply.toolCalls([{ id: 'call_calc', name: 'calculator', arguments: { expression: '6 * 7' } }], {
      content: 'Compute first.',
    }),
    reply.toolCalls(
      [
        {
          id: 'call_post',
          name: 'http_post',
          arguments: { url: `https://${RECEIVER}/record`, body: { value: 42 } },
        },
      ],
      { content: 'Record 42.' },
    ),
    reply.text('Recorded 42.'),
  )
}

/** Every event of the scripted run, in order. */
const FULL_RUN = [
  '1:step_started',
  '2:model_replied',
  '3:call_started',
  '4:call_finished',
  '5:step_started',
  '6:model_replied',
  '7:approval_requested',
  '8:approval_decided',
  '9:call_started',
  '10:call_finished',
  '11:step_started',
  '12:model_replied',
  '13:run_finished',
]

const events = (id: string, headers: Record<string, string> = {}, query = '') =>
  api(`/v1/runs/${id}/events${query}`, { headers: { ...AUTH, ...headers } })

/** Runs the scripted run to its end, approving the post. */
async function finishRun(id: string): Promise<void> {
  await drainAlarms(id)
  const pending = (await getRun(id)).pendingApprovals[0]!
  const res = await decide(id, pending.callId, {
    decision: 'approve',
    args_hash: pending.argsHash,
  })
  expect(res.status).toBe(200)
  await drainAlarms(id)
  expect((await getRun(id)).status).toBe('succeeded')
}

describe('the event stream of a finished run', () => {
  it('is the whole history in order, then closes', async () => {
    scriptModel()
    const id = await startRun(TASK)
    await finishRun(id)

    const res = await events(id)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8')
    expect(res.headers.get('cache-control')).toContain('no-cache')
    const all = await readSse(res).toEnd()
    expect(kinds(all)).toEqual(FULL_RUN)
    expect(new Set(all.map((e) => e.runId))).toEqual(new Set([id]))

    const byType = (t: string) => all.filter((e) => e.type === t).map((e) => e.data)
    expect(byType('step_started')).toEqual([{ step: 0 }, { step: 1 }, { step: 2 }])
    expect(byType('model_replied')[0]).toMatchObject({
      step: 0,
      kind: 'action',
      thought: 'Compute first.',
      calls: [{ id: 'call_calc', tool: 'calculator', args: { expression: '6 * 7' } }],
    })
    expect(byType('model_replied')[2]).toMatchObject({ step: 2, kind: 'finish' })
    const trace = await getTrace(id)
    expect(byType('call_finished')).toEqual([
      {
        step: 0,
        callId: 'call_calc',
        tool: 'calculator',
        kind: 'ok',
        observation: trace.steps[0]!.calls[0]!.observation,
        truncated: false,
        originalSize: trace.steps[0]!.calls[0]!.originalSize,
        ms: trace.steps[0]!.calls[0]!.ms,
      },
      expect.objectContaining({ step: 1, callId: 'call_post', tool: 'http_post', kind: 'ok' }),
    ])
    expect((byType('call_finished')[0] as { observation: string }).observation).toContain('42')
    const approval = trace.steps[1]!.calls[0]!.approval!
    expect(byType('approval_requested')).toEqual([
      {
        step: 1,
        callId: 'call_post',
        tool: 'http_post',
        args: { url: `https://${RECEIVER}/record`, body: { value: 42 } },
        argsHash: approval.argsHash,
        reason: 'Record 42.',
        expiresAt: approval.expiresAt,
      },
    ])
    expect(byType('approval_decided')).toEqual([
      { step: 1, callId: 'call_post', tool: 'http_post', decision: 'approved', by: 'api' },
    ])
    expect(byType('run_finished')).toEqual([
      {
        ok: true,
        answer: 'Recorded 42.',
        agent: trace.agent,
        stopReason: 'finish',
        stepCount: 3,
        usage: trace.usage,
      },
    ])
  })

  it.each([
    ['Last-Event-ID', { 'last-event-id': '4' }, ''],
    ['?after=', {}, '?after=4'],
    ['Last-Event-ID over ?after=', { 'last-event-id': '4' }, '?after=1'],
  ])('resumes after %s without a gap or a duplicate', async (_name, headers, query) => {
    scriptModel()
    const id = await startRun(TASK)
    await finishRun(id)
    const rest = await readSse(await events(id, headers, query)).toEnd()
    expect(kinds(rest)).toEqual(FULL_RUN.slice(4))
  })

  it('after the final event: an empty stream that closes at once', async () => {
    fakes.ai.enqueue(reply.text('Done.'))
    const id = await startRun({ task: 'Say done', tools: ['calculator'] })
    await drainAlarms(id)
    const all = await readSse(await events(id)).toEnd()
    expect(kinds(all)).toEqual(['1:step_started', '2:model_replied', '3:run_finished'])
    expect(await readSse(await events(id, { 'last-event-id': '3' })).toEnd()).toEqual([])
  })

  it('is the same after the object is evicted', async () => {
    scriptModel()
    const id = await startRun(TASK)
    await finishRun(id)
    const before = await readSse(await events(id)).toEnd()
    await evictDurableObject(stubOf(id))
    expect(await readSse(await events(id)).toEnd()).toEqual(before)
  })
})

describe('live subscribers', () => {
  it('several at once see every event as it is stored, and the stream ends with the run', async () => {
    scriptModel()
    const id = await startRun(TASK)
    const a = readSse(await events(id))
    const b = readSse(await events(id))
    await a.until((e) => e.length === 1)
    expect(kinds(a.events)).toEqual(['1:step_started'])

    await drainAlarms(id)
    await a.until((e) => e.some((x) => x.type === 'approval_requested'))
    expect(kinds(a.events)).toEqual(FULL_RUN.slice(0, 7))
    expect(a.closed).toBe(false)
    // A third one joins while the run waits: history first, then the same live events.
    const c = readSse(await events(id, {}, '?after=2'))

    const pending = (await getRun(id)).pendingApprovals[0]!
    await decide(id, pending.callId, {
      decision: 'approve',
      args_hash: pending.argsHash,
    })
    await a.until((e) => e.length === 8)
    expect(a.events[7]).toMatchObject({ type: 'approval_decided', data: { by: 'api' } })
    await drainAlarms(id)

    for (const sub of [a, b]) expect(kinds(await sub.toEnd())).toEqual(FULL_RUN)
    expect(kinds(await c.toEnd())).toEqual(FULL_RUN.slice(2))
    expect(b.events).toEqual(a.events)
  })

  it('sends a comment heartbeat every 15 s while the run waits', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] })
    try {
      fakes.ai.enqueue(reply.toolCalls([{ ...postCall }]))
      const id = await startRun({ task: 'Post', tools: ['http_post'] })
      await drainAlarms(id)
      const sub = readSse(await events(id))
      await sub.until((e) => e.some((x) => x.type === 'approval_requested'))
      expect(sub.comments).toEqual([])
      // The timer fires in the object's own context, as the real one would.
      const tick = () => runInDurableObject(stubOf(id), () => vi.advanceTimersByTime(15_000))
      await tick()
      await sub.until(() => sub.comments.length === 1)
      await tick()
      await sub.until(() => sub.comments.length === 2)
      expect(sub.comments).toEqual(['heartbeat', 'heartbeat'])
      await sub.cancel()
    } finally {
      vi.useRealTimers()
    }
  })

  it('a subscriber that goes away does not disturb the run or the others', async () => {
    scriptModel()
    const id = await startRun(TASK)
    const gone = readSse(await events(id))
    const stays = readSse(await events(id))
    await gone.until((e) => e.length === 1)
    await gone.cancel()
    await finishRun(id)
    expect(kinds(await stays.toEnd())).toEqual(FULL_RUN)
  })
})

const postCall = {
  id: 'call_post',
  name: 'http_post',
  arguments: { url: `https://${RECEIVER}/record`, body: { value: 1 } },
}

describe('cancel and denial', () => {
  it('a cancelled run closes its pending approval and finishes', async () => {
    fakes.ai.enqueue(reply.toolCalls([{ ...postCall }], { content: 'Post it.' }))
    const id = await startRun({ task: 'Post', tools: ['http_post'] })
    await drainAlarms(id)
    expect((await postJson(`/v1/runs/${id}/cancel`, {})).status).toBe(202)
    await drainAlarms(id)
    const all = await readSse(await events(id)).toEnd()
    expect(all.map((e) => e.type)).toEqual([
      'step_started',
      'model_replied',
      'approval_requested',
      'approval_decided',
      'run_finished',
    ])
    expect(all[3]!.data).toMatchObject({ decision: 'denied', by: 'system', reason: 'cancelled' })
    expect(all[4]!.data).toMatchObject({ ok: false, stopReason: 'cancelled', answer: '' })
  })

  it('a denied call finishes without being started', async () => {
    fakes.ai.enqueue(reply.toolCalls([{ ...postCall }]), reply.text('Not posted.'))
    const id = await startRun({ task: 'Post', tools: ['http_post'] })
    await drainAlarms(id)
    const pending = (await getRun(id)).pendingApprovals[0]!
    await decide(id, pending.callId, { decision: 'deny', args_hash: pending.argsHash })
    await drainAlarms(id)
    const all = await readSse(await events(id)).toEnd()
    expect(all.map((e) => e.type)).toEqual([
      'step_started',
      'model_replied',
      'approval_requested',
      'approval_decided',
      'call_finished',
      'step_started',
      'model_replied',
      'run_finished',
    ])
    expect(all[4]!.data).toMatchObject({ kind: 'denied', callId: 'call_post' })
    expect(fakes.receiver.hits).toEqual([])
  })
})

describe('bad requests', () => {
  it.each([
    ['Last-Event-ID', { 'last-event-id': 'abc' }, '', /Last-Event-ID/],
    ['after', {}, '?after=-1', /after must be/],
  ])('a malformed %s is a 400', async (_name, headers, query, message) => {
    fakes.ai.enqueue(reply.text('Done.'))
    const id = await startRun({ task: 'Say done', tools: ['calculator'] })
    const res = await events(id, headers, query)
    expect(res.status).toBe(400)
    const body = (await res.json()) as { error: { code: string; message: string } }
    expect(body.error.code).toBe('invalid_after')
    expect(body.error.message).toMatch(message)
  })

  it('an unknown run is a 404; no token is a 401; a webhook signature is a 403', async () => {
    const unknown = await events(`run_${'0'.repeat(32)}`)
    expect(unknown.status).toBe(404)
    expect(((await unknown.json()) as { error: { code: string } }).error.code).toBe('run_not_found')
    expect((await api(`/v1/runs/run_${'0'.repeat(32)}/events`)).status).toBe(401)
    const ts = String(Math.floor(Date.now() / 1000))
    const signed = await api(`/v1/runs/run_${'0'.repeat(32)}/events`, {
      headers: {
        'x-edgeloop-timestamp': ts,
        'x-edgeloop-signature': `v1=${await hmacHex(WEBHOOK_SECRET, `${ts}.`)}`,
      },
    })
    expect(signed.status).toBe(403)
  })
})

describe('callback_events: "all"', () => {
  const CALLBACK = `https://${RECEIVER}/hooks/edgeloop`

  it('sends every event to callback_url, signed, then the final result', async () => {
    scriptModel()
    const id = await startRun({ ...TASK, callback_url: CALLBACK, callback_events: 'all' })
    await finishRun(id)
    const streamed = await readSse(await events(id)).toEnd()
    const hooks = fakes.receiver.hits.filter((h) => h.path === '/hooks/edgeloop')
    const eventHits = hooks.filter((h) => h.headers.get('x-edgeloop-event'))
    const received = eventHits.map((h) => JSON.parse(h.body) as RunEvent)
    expect(received.sort((x, y) => x.seq - y.seq)).toEqual(streamed)
    for (const hit of eventHits) {
      const ts = hit.headers.get('x-edgeloop-timestamp')!
      expect(hit.headers.get('x-edgeloop-signature')).toBe(
        `c1=${await hmacHex(WEBHOOK_SECRET, `edgeloop-callback.${ts}.${hit.body}`)}`,
      )
      const event = JSON.parse(hit.body) as RunEvent
      expect(hit.headers.get('x-edgeloop-event')).toBe(event.type)
      expect(hit.headers.get('x-edgeloop-delivery')).toBe(`${id}:event:${event.seq}`)
    }
    // The final RunResult still comes as before, once.
    const final = hooks.filter((h) => !h.headers.get('x-edgeloop-event'))
    expect(final).toHaveLength(1)
    expect(JSON.parse(final[0]!.body)).toMatchObject({ id, ok: true, answer: 'Recorded 42.' })
    // Delivered event callbacks do not crowd the run view.
    expect((await getRun(id)).deliveries.map((d) => d.id)).toEqual(['callback'])
  })

  it('retries an event the receiver refused', async () => {
    fakes.ai.enqueue(reply.text('Done.'))
    fakes.receiver.answer(503)
    const id = await startRun({
      task: 'Say done',
      tools: ['calculator'],
      callback_url: CALLBACK,
      callback_events: 'all',
    })
    await drainAlarms(id)
    const failed = (await getRun(id)).deliveries.filter((d) => d.status === 'pending')
    expect(failed).toHaveLength(1)
    expect(failed[0]!.lastError).toMatch(/HTTP 503/)
    fakes.clock.advance(Date.parse(failed[0]!.nextAt) - fakes.clock.now())
    await drainAlarms(id)
    const seqs = fakes.receiver.hits
      .filter((h) => h.headers.get('x-edgeloop-event'))
      .map((h) => (JSON.parse(h.body) as RunEvent).seq)
    // One event was sent twice (refused, then accepted); every event arrived.
    expect(new Set(seqs)).toEqual(new Set([1, 2, 3]))
    expect(seqs).toHaveLength(4)
  })

  it('the default sends only the final result', async () => {
    fakes.ai.enqueue(reply.text('Done.'))
    const id = await startRun({ task: 'Say done', tools: ['calculator'], callback_url: CALLBACK })
    await drainAlarms(id)
    expect(fakes.receiver.hits).toHaveLength(1)
    expect(fakes.receiver.hits[0]!.headers.get('x-edgeloop-event')).toBeNull()
  })

  it('callback_events without callback_url is a 400', async () => {
    const res = await postJson('/v1/runs', { task: 'x', callback_events: 'all' })
    expect(res.status).toBe(400)
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(
      /callback_events needs a callback_url/,
    )
  })
})
