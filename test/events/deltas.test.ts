/** Live `answer_delta` / `thought_delta` frames: sent while the model streams, never stored. */
import { describe, expect, it } from 'vitest'
import { reply } from '../fakes/fake-openai'
import { api, AUTH, drainAlarms, getRun, startRun, useServiceFakes } from '../service/harness'
import { kinds, readSse, type SseReader } from './sse'

const fakes = useServiceFakes()

const events = (id: string, headers: Record<string, string> = {}) =>
  api(`/v1/runs/${id}/events`, { headers: { ...AUTH, ...headers } })

/** Each step's delta text, joined, by event type. */
function joined(sub: SseReader): Record<string, string> {
  const out: Record<string, string> = {}
  for (const d of sub.deltas) {
    const key = `${d.event}:${d.data.step}`
    out[key] = (out[key] ?? '') + d.data.delta
  }
  return out
}

describe('live delta events', () => {
  it('carry the reply as it streams, before its stored event, without an id', async () => {
    const answer = 'The result is 42, checked twice — «sûr» 🎯.'
    fakes.ai.enqueue(
      reply.toolCalls(
        [{ id: 'call_calc', name: 'calculator', arguments: { expression: '6 * 7' } }],
        {
          content: 'Compute first.',
        },
      ),
      reply.text(answer),
    )
    const id = await startRun({ task: 'What is 6 * 7?', tools: ['calculator'] })
    const live = readSse(await events(id))
    await live.until((e) => e.length === 1)
    await drainAlarms(id)
    const stored = await live.toEnd()
    expect((await getRun(id)).status).toBe('succeeded')

    expect(joined(live)).toEqual({ 'answer_delta:0': 'Compute first.', 'answer_delta:1': answer })
    for (const d of live.deltas) expect(d.fields).toEqual(['event', 'data'])
    // Each names the model call it comes from: the step's first, as no answer was lost.
    for (const d of live.deltas) expect(d.data.attempt).toBe(1)
    // Each step's pieces come before the stored reply of that step.
    for (const d of live.deltas) {
      const replied = stored.findIndex(
        (e) => e.type === 'model_replied' && e.data.step === d.data.step,
      )
      expect(d.after).toBeLessThanOrEqual(replied)
    }

    // Replayed, the stream is the stored events alone: the same ones, no deltas.
    const replay = readSse(await events(id))
    expect(kinds(await replay.toEnd())).toEqual(kinds(stored))
    expect(replay.events).toEqual(stored)
    expect(replay.deltas).toEqual([])
    const resumed = readSse(await events(id, { 'last-event-id': '2' }))
    expect(kinds(await resumed.toEnd())).toEqual(kinds(stored.slice(2)))
    expect(resumed.deltas).toEqual([])
  })

  it('are thought_delta in the text protocol, the reply as written', async () => {
    const text =
      '```json\n{"thought": "I know this", "action": "finish", "args": {"answer": "Paris"}}\n```'
    fakes.ai.enqueue(reply.text(text))
    const id = await startRun({
      task: 'Capital of France?',
      tools: ['calculator'],
      protocol: 'text',
    })
    const live = readSse(await events(id))
    await live.until((e) => e.length === 1)
    await drainAlarms(id)
    await live.toEnd()
    expect((await getRun(id)).result).toMatchObject({ answer: 'Paris' })
    expect(joined(live)).toEqual({ 'thought_delta:0': text })
  })

  it('are not sent when nobody listens, and the run is the same', async () => {
    fakes.ai.enqueue(reply.text('Alone.'))
    const id = await startRun({ task: 'Say something', tools: ['calculator'] })
    await drainAlarms(id)
    const run = await getRun(id)
    expect(run).toMatchObject({ status: 'succeeded', result: { answer: 'Alone.' } })
    const replay = readSse(await events(id))
    await replay.toEnd()
    expect(replay.deltas).toEqual([])
  })
})
