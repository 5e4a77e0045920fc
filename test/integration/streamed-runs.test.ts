/**
 * Runs whose model calls stream behave as without streaming: the same trace and usage, a cancel
 * mid-stream records nothing of the reply, and a slice that dies mid-stream is redone from its
 * stored state, the lost call counted once as an estimate.
 */
import * as z from 'zod/mini'
import { describe, expect, it } from 'vitest'
import {
  createRunState,
  defineTool,
  parseRunState,
  react,
  runSlice,
  Slice,
  toRunResult,
  transition,
  MemoryObservationStore,
  ToolRegistry,
  type Deps,
  type RunState,
} from '../../src/kernel/index'
import { reply } from '../fakes/fake-openai'
import { UNLIMITED, useWire } from './harness'

const wire = useWire()

const lookup = defineTool({
  name: 'lookup',
  description: 'Look a service up.',
  params: z.object({ q: z.string() }),
  returns: 'Its status.',
  handler: (args) => `status of ${args.q}: degraded`,
})

function script(): void {
  wire.api.enqueue(
    reply.toolCalls([{ id: 'call_look', name: 'lookup', arguments: { q: 'api' } }], {
      content: 'Check first.',
      usage: { prompt_tokens: 40, completion_tokens: 9 },
    }),
    reply.text('api is degraded', { usage: { prompt_tokens: 70, completion_tokens: 4 } }),
  )
}

function roundTrip(state: RunState): RunState {
  const parsed = parseRunState(JSON.parse(JSON.stringify(state)))
  if (!parsed.ok) throw new Error(parsed.error)
  return parsed.state
}

describe('a streamed run', () => {
  it('has the same trace and usage as the same run not streamed', async () => {
    const now = () => 1_700_000_000_000
    const results = []
    for (const stream of ['off', 'on'] as const) {
      script()
      const model = wire.model({ stream })
      results.push(await react('How is api?', [lookup], { model, protocol: 'native', now }))
    }
    const [whole, streamed] = results
    expect(streamed!.usage).toEqual(whole!.usage)
    expect(streamed).toMatchObject({ ok: true, answer: 'api is degraded' })
    expect(streamed!.usage).toMatchObject({
      promptTokens: 110,
      completionTokens: 13,
      estimated: false,
    })
    const shape = (r: typeof whole) =>
      r!.steps.map((s) => [s.kind, s.thought, s.calls.map((c) => [c.name, c.args])])
    expect(shape(streamed)).toEqual(shape(whole))
    expect(wire.api.bodies.map((b) => b.stream === true)).toEqual([false, false, true, true])
  })

  it('cancelled mid-stream records no half reply; the call counts as an estimate', async () => {
    wire.api.enqueue(reply.text('a long answer that never ends', { stallAfterChunks: 4 }))
    const cancel = new AbortController()
    const deps: Deps = {
      model: wire.model({ stream: 'on' }),
      registry: new ToolRegistry([lookup]),
      observations: new MemoryObservationStore(),
      signal: cancel.signal,
      onModelText: () => cancel.abort(new Error('cancelled')),
    }
    const state = createRunState({ task: 'How is api?', tools: ['lookup'], protocol: 'native' })
    const out = await runSlice(state, deps, UNLIMITED)
    expect(out.state.result).toMatchObject({ ok: false, stopReason: 'cancelled', answer: '' })
    expect(out.state.steps).toEqual([])
    expect(out.state.usage).toMatchObject({ modelCalls: 1, completionTokens: 0, estimated: true })
  })

  it('a slice that dies mid-stream is redone from the stored state, counted once', async () => {
    wire.api.enqueue(reply.text('half of an answer that', { stallAfterChunks: 3 }))
    const dying = new AbortController()
    const pieces: string[] = []
    const deps = (signal?: AbortSignal): Deps => ({
      model: wire.model({ stream: 'on' }),
      registry: new ToolRegistry([lookup]),
      observations: new MemoryObservationStore(),
      ...(signal ? { signal } : {}),
      onModelText: (_step, _protocol, d) => pieces.push(d),
    })
    const initial = createRunState({ task: 'How is api?', tools: ['lookup'], protocol: 'native' })
    const first = new Slice(deps(dying.signal))
    const started = await transition(initial, first)
    expect(started.event.action).toBe('model_call_started')
    const stored = roundTrip(started.state)
    // The process dies while the reply streams: its transition never returns.
    const lost = transition(started.state, first)
    while (pieces.length === 0) await new Promise((r) => setTimeout(r, 5))
    expect(stored.steps).toEqual([])

    wire.api.enqueue(
      reply.text('api is degraded', { usage: { prompt_tokens: 70, completion_tokens: 4 } }),
    )
    const out = await runSlice(stored, deps(), UNLIMITED)
    dying.abort(new Error('process gone'))
    await Promise.resolve(lost).catch(() => {})
    const trace = toRunResult(out.state)
    expect(trace).toMatchObject({ ok: true, answer: 'api is degraded' })
    expect(trace.steps).toHaveLength(1)
    expect(trace.steps[0]).toMatchObject({ kind: 'finish' })
    expect(out.state.usage).toMatchObject({
      modelCalls: 2,
      lostModelCalls: 1,
      estimated: true,
      completionTokens: 4,
    })
    expect(out.state.usage.promptTokens).toBe(70 + stored.modelCall!.promptTokens)
  })
})
