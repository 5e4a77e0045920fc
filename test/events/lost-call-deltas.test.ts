/**
 * Live deltas of a model call whose answer a crash lost (docs/streaming.md#live-delta-events):
 * the text streamed before the crash is never stored, and the call made again names a higher
 * attempt, so a watcher knows which text to drop.
 */
import { describe, expect, it } from 'vitest'
import {
  createRunState,
  parseRunState,
  runSlice,
  Slice,
  transition,
  type Deps,
  type Model,
  type ModelRequest,
  type ModelResponse,
  type RunState,
} from '../../src/kernel/index'
import { sliceDeps, UNLIMITED } from '../kernel/harness'

/** A streaming model: each call writes its reply's text piece by piece, then answers. */
class StreamingModel implements Model {
  readonly name = 'streaming-test'
  constructor(private readonly replies: string[]) {}

  async complete(request: ModelRequest): Promise<ModelResponse> {
    const text = this.replies.shift()
    if (text === undefined) throw new Error('the streaming test model has no more replies')
    for (const piece of text.match(/.{1,5}/gsu) ?? []) request.onText?.(piece)
    return { text, finishReason: 'stop' }
  }
}

interface Seen {
  step: number
  attempt: number
  delta: string
}

function roundTrip(state: RunState): RunState {
  const parsed = parseRunState(JSON.parse(JSON.stringify(state)))
  if (!parsed.ok) throw new Error(parsed.error)
  return parsed.state
}

function setup(replies: string[]) {
  const seen: Seen[] = []
  const deps: Deps = {
    ...sliceDeps(new StreamingModel(replies), [], () => 1_700_000_000_000),
    onModelText: (step, _protocol, delta, attempt) => seen.push({ step, attempt, delta }),
  }
  return { seen, deps, state: createRunState({ task: 'Say hi', tools: [] }) }
}

const text = (seen: Seen[], attempt: number) =>
  seen
    .filter((d) => d.attempt === attempt)
    .map((d) => d.delta)
    .join('')

describe('deltas of a lost model call', () => {
  it('the retried call streams under a higher attempt; the lost text is never stored', async () => {
    const lost = 'A whole reply nobody will ever store.'
    const kept = 'Hi there.'
    const s = setup([lost, kept])
    // One invocation writes the call's record, streams the whole reply, and dies before the
    // reply reaches storage: what is stored is the state with the record.
    const slice = new Slice(s.deps)
    const started = await transition(s.state, slice)
    expect(started.event.action).toBe('model_call_started')
    await transition(started.state, slice)
    const stored = roundTrip(started.state)
    expect(stored.modelCall).toMatchObject({ step: 0, attempt: 1 })

    const out = await runSlice(stored, s.deps, UNLIMITED)
    expect(out.state.result).toMatchObject({ ok: true, answer: kept })
    expect(out.state.usage.lostModelCalls).toBe(1)
    // Every piece names its step and call: the lost call's text is attempt 1, the kept one's 2.
    expect(new Set(s.seen.map((d) => d.step))).toEqual(new Set([0]))
    expect(text(s.seen, 1)).toBe(lost)
    expect(text(s.seen, 2)).toBe(kept)
    expect(s.seen.findIndex((d) => d.attempt === 2)).toBeGreaterThan(
      s.seen.findLastIndex((d) => d.attempt === 1),
    )
    expect(JSON.stringify(out.state)).not.toContain('nobody will ever store')
  })

  it('without a crash every piece is attempt 1', async () => {
    const s = setup(['Hi there.'])
    const out = await runSlice(s.state, s.deps, UNLIMITED)
    expect(out.state.result).toMatchObject({ ok: true })
    expect(s.seen.map((d) => d.attempt)).toEqual(s.seen.map(() => 1))
    expect(text(s.seen, 1)).toBe('Hi there.')
  })
})
