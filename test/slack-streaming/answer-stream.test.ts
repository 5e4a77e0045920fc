import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { exports } from 'cloudflare:workers'
import { reply } from '../fakes/fake-openai'
import type { FakeSlackCall } from '../fakes/fake-slack'
import { readSse } from '../events/sse'
import { BASE, CHANNEL, REQUESTER, SlackWorld } from '../slack-e2e/harness'

const worker = (exports as unknown as { default: Fetcher }).default

/**
 * The answer written into the run's Slack thread as the model writes it (chat.startStream /
 * appendStream / stopStream), through the same coalescing outbox as the live progress, and the
 * final post where the workspace cannot stream.
 */
let world: SlackWorld
beforeEach(() => {
  world = new SlackWorld()
})
afterEach(() => world.restore())

const ANSWER =
  'The gateway pool is exhausted: raise the pool size to 64 and restart the pods one by one.'

function streamCalls(): FakeSlackCall[] {
  return world.slack.calls.filter(
    (c) => c.method.startsWith('chat.') && c.method.endsWith('Stream'),
  )
}

/** One search, then the answer written over ~6 s of the clock. */
function script() {
  world.model.enqueue(
    reply.toolCalls([
      { id: 'call_search', name: 'search_logs', arguments: { service: 'gateway', query: 'pool' } },
    ]),
    reply.text(ANSWER),
  )
  world.modelWrites = { realMs: 2, clockMs: 200 }
}

/** The run's stored events (types and data) and its trace, for comparing two runs. */
async function storedRecord(runId: string) {
  const auth = { authorization: 'Bearer test-token' }
  const events = await readSse(
    await worker.fetch(`${BASE}/v1/runs/${runId}/events`, { headers: auth }),
  ).toEnd()
  const trace = (await (
    await worker.fetch(`${BASE}/v1/runs/${runId}/trace`, { headers: auth })
  ).json()) as Record<string, unknown>
  const scrub = (v: unknown): unknown =>
    JSON.parse(
      JSON.stringify(v)
        .replace(/run_[0-9a-f]{32}/g, 'RUN')
        .replace(/"[a-zA-Z]*(At|Ms|ms|at)":("[^"]*"|\d+)/g, '"time":0')
        .replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, 'T'),
    )
  return { events: scrub(events.map((e) => ({ type: e.type, data: e.data }))), trace: scrub(trace) }
}

describe('the answer streams into the thread', () => {
  it('start, appends, stop, in order, with the whole answer and no final post', async () => {
    script()
    const { runId } = await world.command('why is the gateway slow?')
    await world.settle(runId)
    const view = await world.deliverAll(runId)
    expect(view.status).toBe('succeeded')

    const calls = streamCalls()
    expect(calls.every((c) => (c.response as { ok: boolean }).ok)).toBe(true)
    const methods = calls.map((c) => c.method)
    expect(methods[0]).toBe('chat.startStream')
    expect(methods.at(-1)).toBe('chat.stopStream')
    expect(methods.slice(1, -1).every((m) => m === 'chat.appendStream')).toBe(true)
    expect(methods.filter((m) => m === 'chat.appendStream').length).toBeGreaterThanOrEqual(1)
    // Coalesced: far fewer calls than the pieces the model wrote, never two within the gap.
    expect(calls.length).toBeLessThan(ANSWER.length / 3)
    for (let i = 2; i < calls.length - 1; i++)
      expect(calls[i]!.at - calls[i - 1]!.at).toBeGreaterThanOrEqual(1000)

    const start = calls[0]!.body!
    const [first] = world.messages()
    expect(start).toMatchObject({
      channel: CHANNEL,
      thread_ts: first!.ts,
      recipient_team_id: 'T0001',
      recipient_user_id: REQUESTER,
    })
    const text = calls.map((c) => (c.body?.markdown_text as string | undefined) ?? '').join('')
    expect(text).toBe(ANSWER)
    expect(view.result?.answer).toBe(ANSWER)
    // The streamed message is the answer; the final post was not made as well.
    const streamed = world
      .messages()
      .find((m) => m.ts === (calls[0]!.response as { ts: string }).ts)
    expect(streamed).toMatchObject({ text: ANSWER, streaming: false, thread_ts: first!.ts })
    expect(world.messages()).toHaveLength(2)
    expect(view.deliveries.find((d) => d.id === 'slack.final')?.status).toBe('delivered')
  })

  it('falls back to the final post where the workspace answers unknown_method, and remembers it', async () => {
    world.slack.streamingAvailable = false
    script()
    // A workspace of its own: what this isolate learns of it must not touch the other tests.
    const { runId } = await world.command('why is the gateway slow?', { team_id: 'T0NOSTREAM' })
    await world.settle(runId)
    const view = await world.deliverAll(runId)
    expect(view.status).toBe('succeeded')
    const tried = streamCalls()
    expect(tried.map((c) => [c.method, (c.response as { error?: string }).error])).toEqual([
      ['chat.startStream', 'unknown_method'],
    ])
    const answer = world.messages().at(-1)!
    expect(answer.text).toContain(ANSWER.slice(0, 40))
    expect(answer.streaming).toBeUndefined()

    // The next run in that workspace does not ask again.
    script()
    const again = await world.command('and the api?', { team_id: 'T0NOSTREAM' })
    await world.settle(again.runId)
    expect((await world.deliverAll(again.runId)).status).toBe('succeeded')
    expect(streamCalls()).toHaveLength(1)
    expect(world.messages().at(-1)!.text).toContain(ANSWER.slice(0, 40))
  })

  it('a 429 with Retry-After during appends neither slows the run nor loses text', async () => {
    script()
    world.slack.failNext('chat.appendStream', { status: 429, retryAfter: 30 })
    const { runId } = await world.command('why is the gateway slow?')
    const before = Date.now()
    await world.settle(runId)
    const done = await world.view(runId)
    expect(done.status).toBe('succeeded')
    // The run ended before the clock reached Slack's Retry-After: it did not wait for Slack.
    expect(Date.now() - before).toBeLessThan(30_000)
    const limited = world.slack.calls.find((c) => c.status === 429)
    expect(limited?.method).toBe('chat.appendStream')

    const view = await world.deliverAll(runId)
    const calls = streamCalls().filter((c) => (c.response as { ok: boolean }).ok)
    expect(calls.at(-1)!.method).toBe('chat.stopStream')
    expect(calls.map((c) => (c.body?.markdown_text as string | undefined) ?? '').join('')).toBe(
      ANSWER,
    )
    expect(view.deliveries.find((d) => d.id === 'slack.stream')?.status).toBe('delivered')
  })

  it('leaves the stored events and trace exactly as a run that did not stream', async () => {
    script()
    const streamedRun = await world.command('why is the gateway slow?')
    await world.settle(streamedRun.runId)
    await world.deliverAll(streamedRun.runId)
    expect(streamCalls().length).toBeGreaterThan(0)

    world.slack.streamingAvailable = false
    script()
    const posted = await world.command('why is the gateway slow?', { team_id: 'T0NOSTREAM2' })
    await world.settle(posted.runId)
    await world.deliverAll(posted.runId)

    const a = await storedRecord(streamedRun.runId)
    const b = await storedRecord(posted.runId)
    expect(a.events).toEqual(b.events)
    expect(a.trace).toEqual(b.trace)
  })
})
