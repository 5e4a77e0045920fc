import * as z from 'zod/mini'
import { describe, expect, it } from 'vitest'
import {
  createRunState,
  defineTool,
  Slice,
  transition,
  type RunState,
} from '../../src/kernel/index'
import { CallIds } from '../../src/kernel/call-ids'
import {
  fakeClock,
  nativeAnswer,
  nativeCall,
  nativeCalls,
  ScriptedModel,
} from '../fakes/scripted-model'
import { recordingTool, sliceDeps, type Ran } from './harness'

/**
 * The step machine answers at once when nothing waits (sync-or-async.ts): only the model call,
 * and tools that return a promise, give a promise. The run is the same either way.
 */
function setup(asyncTool: boolean) {
  const clock = fakeClock()
  const ran: Ran = []
  const lookup = {
    name: 'lookup',
    description: 'Look a service up.',
    params: z.object({ q: z.string() }),
    returns: 'Its status.',
  }
  const tool = asyncTool
    ? defineTool({
        ...lookup,
        handler: async ({ q }, ctx) => {
          await Promise.resolve()
          ran.push({ name: 'lookup', args: { q }, callId: ctx.callId })
          return `status of ${q}: ok`
        },
      })
    : recordingTool(ran, { ...lookup, answer: (args) => `status of ${args.q}: ok` })
  const model = new ScriptedModel([
    nativeCalls([nativeCall('lookup', { q: 'api' }, 'call_1')], 'Check.'),
    nativeAnswer('api is ok'),
  ])
  const slice = new Slice(sliceDeps(model, [tool], clock.now))
  const state = createRunState({
    id: 'run_sync',
    task: 'Is the api ok?',
    tools: ['lookup'],
    protocol: 'native',
    now: clock.now(),
  })
  return { slice, state, ran }
}

/** Runs transitions to the end, noting for each whether it came back as a promise. */
async function walk(state: RunState, slice: Slice) {
  const seen: { action: string; promise: boolean }[] = []
  let current = state
  while (current.phase !== 'done') {
    const out = transition(current, slice)
    const promise = out instanceof Promise
    const { state: next, event } = await out
    seen.push({ action: event.action, promise })
    current = next
  }
  return { seen, final: current }
}

describe('transitions that wait for nothing', () => {
  it('come back at once; only the model call and an asynchronous tool give a promise', async () => {
    const sync = setup(false)
    const a = await walk(sync.state, sync.slice)
    expect(a.seen).toEqual([
      { action: 'model_call_started', promise: false },
      { action: 'think', promise: true },
      { action: 'run_call', promise: false },
      { action: 'model_call_started', promise: false },
      { action: 'think', promise: true },
    ])
    const async = setup(true)
    const b = await walk(async.state, async.slice)
    expect(b.seen.map((s) => s.promise)).toEqual([false, true, true, false, true])
    // Either way the same run: the same calls, observations and answer.
    expect(a.final.result).toMatchObject({ ok: true, answer: 'api is ok' })
    expect(b.final.result).toMatchObject({ ok: true, answer: 'api is ok' })
    expect(b.final.steps).toEqual(a.final.steps)
    expect(sync.ran).toEqual(async.ran)
  })
})

describe('CallIds', () => {
  const call = (id: string) => ({ id }) as RunState['steps'][number]['calls'][number]
  const run = (id: string, ids: string[][]) =>
    ({ id, steps: ids.map((calls) => ({ calls: calls.map(call) })) }) as unknown as RunState

  it('grows with the run and starts again for another run or a shorter one', () => {
    const index = new CallIds()
    expect([...index.of(run('r1', [['a'], ['b', 'c']]))]).toEqual(['a', 'b', 'c'])
    expect([...index.of(run('r1', [['a'], ['b', 'c'], ['d']]))]).toEqual(['a', 'b', 'c', 'd'])
    expect([...index.of(run('r2', [['x']]))]).toEqual(['x'])
    expect([...index.of(run('r2', []))]).toEqual([])
  })
})
