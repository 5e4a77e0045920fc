/**
 * Read-only calls of one native turn run at the same time; side effects still run
 * one at a time, in the model's order, each behind its `started` record, after the reads.
 */
import * as z from 'zod/mini'
import { describe, expect, it } from 'vitest'
import {
  createRunState,
  defineTool,
  parseRunState,
  runSlice,
  toRunResult,
  type RunState,
  type Tool,
} from '../../src/kernel/index'
import {
  fakeClock,
  framed,
  nativeAnswer,
  nativeCall,
  nativeCalls,
  ScriptedModel,
} from '../fakes/scripted-model'
import { sliceDeps, UNLIMITED } from './harness'

/** `n` read-only calls must all be in flight before any returns: sequential runs time out. */
function barrier(n: number) {
  let arrived = 0
  let open!: () => void
  const opened = new Promise<void>((resolve) => (open = resolve))
  return async () => {
    if (++arrived === n) open()
    await opened
  }
}

function readTool(name: string, log: string[], wait: () => Promise<void>, timeoutMs = 2_000): Tool {
  return defineTool({
    name,
    description: `Reads ${name}.`,
    params: z.object({ k: z.number() }),
    returns: 'A value.',
    timeoutMs,
    handler: async ({ k }, ctx) => {
      log.push(`start ${name} ${k}`)
      await wait()
      if (ctx.signal.aborted) throw new Error('aborted')
      log.push(`end ${name} ${k}`)
      return `${name} ${k}`
    },
  })
}

function writeTool(log: string[]): Tool {
  return defineTool({
    name: 'write',
    description: 'Writes k.',
    params: z.object({ k: z.number() }),
    returns: 'ok',
    sideEffect: true,
    handler: ({ k }) => {
      log.push(`write ${k}`)
      return `wrote ${k}`
    },
  })
}

function run(tools: Tool[], calls: ReturnType<typeof nativeCall>[], budget = {}) {
  const clock = fakeClock()
  const model = new ScriptedModel([nativeCalls(calls), nativeAnswer('done')])
  const deps = sliceDeps(model, tools, clock.now)
  const state = createRunState({
    id: 'run_par',
    task: 'read',
    tools: tools.map((t) => t.name),
    protocol: 'native',
    policy: { mode: 'allow' },
    budget,
  })
  return { model, deps, state }
}

describe('parallel read-only calls', () => {
  it('three read-only calls of one turn are in flight together, each answered', async () => {
    const log: string[] = []
    const wait = barrier(3)
    const tool = readTool('shard', log, wait)
    const { model, deps, state } = run(
      [tool],
      [0, 1, 2].map((k) => nativeCall('shard', { k }, `call_${k}`)),
    )
    const out = await runSlice(state, deps, UNLIMITED)
    const result = toRunResult(out.state)
    expect(result).toMatchObject({ ok: true, answer: 'done' })
    expect(result.steps[0]!.calls.map((c) => [c.id, c.observation])).toEqual([
      ['call_0', 'shard 0'],
      ['call_1', 'shard 1'],
      ['call_2', 'shard 2'],
    ])
    expect(log.slice(0, 3)).toEqual(['start shard 0', 'start shard 1', 'start shard 2'])
    // The next request answers the calls in the model's order.
    const tools = model.requests[1]!.messages.filter((m) => m.role === 'tool')
    expect(tools.map((m) => [m.tool_call_id, m.content])).toEqual([
      ['call_0', framed('shard', 'shard 0')],
      ['call_1', framed('shard', 'shard 1')],
      ['call_2', framed('shard', 'shard 2')],
    ])
  })

  it('runs at most maxParallelCalls at once', async () => {
    const log: string[] = []
    let inFlight = 0
    let most = 0
    const wait = async () => {
      most = Math.max(most, ++inFlight)
      await new Promise((r) => setTimeout(r, 5))
      inFlight--
    }
    const tool = readTool('shard', log, wait)
    const { deps, state } = run(
      [tool],
      Array.from({ length: 10 }, (_, k) => nativeCall('shard', { k }, `call_${k}`)),
      { maxParallelCalls: 4 },
    )
    const out = await runSlice(state, deps, UNLIMITED)
    expect(toRunResult(out.state).ok).toBe(true)
    expect(most).toBe(4)
    expect(out.state.steps[0]!.calls.every((c) => c.kind === 'ok')).toBe(true)
  })

  it('each call has its own timeout: a slow one times out, the others answer', async () => {
    const log: string[] = []
    const fast = readTool('fast', log, async () => {})
    const slow = readTool('slow', log, () => new Promise((r) => setTimeout(r, 500)), 50)
    const { deps, state } = run(
      [fast, slow],
      [nativeCall('slow', { k: 0 }, 'call_s'), nativeCall('fast', { k: 1 }, 'call_f')],
    )
    const out = await runSlice(state, deps, UNLIMITED)
    const calls = out.state.steps[0]!.calls
    expect(calls.map((c) => [c.id, c.kind])).toEqual([
      ['call_s', 'tool_error'],
      ['call_f', 'ok'],
    ])
    expect(calls[0]!.observation).toContain('timed out')
  })

  it('side effects run after the reads, one at a time, in order, each behind its started record', async () => {
    const log: string[] = []
    const wait = barrier(2)
    const { deps, state } = run(
      [readTool('shard', log, wait), writeTool(log)],
      [
        nativeCall('write', { k: 1 }, 'call_w1'),
        nativeCall('shard', { k: 0 }, 'call_r0'),
        nativeCall('write', { k: 2 }, 'call_w2'),
        nativeCall('shard', { k: 1 }, 'call_r1'),
      ],
    )
    const actions: string[] = []
    const out = await runSlice(state, deps, UNLIMITED, (_s, e) => {
      if (e.action !== 'think' && e.action !== 'model_call_started')
        actions.push(`${e.action} ${e.callId ?? e.tool ?? ''}`.trim())
    })
    expect(toRunResult(out.state).ok).toBe(true)
    expect(log).toEqual([
      'start shard 0',
      'start shard 1',
      'end shard 0',
      'end shard 1',
      'write 1',
      'write 2',
    ])
    expect(actions.slice(0, 5)).toEqual([
      'run_calls shard,shard',
      'start_call call_w1',
      'run_call call_w1',
      'start_call call_w2',
      'run_call call_w2',
    ])
    // The trace keeps the model's order.
    expect(toRunResult(out.state).steps[0]!.calls.map((c) => c.id)).toEqual([
      'call_w1',
      'call_r0',
      'call_w2',
      'call_r1',
    ])
  })

  it('a crash mid-way re-runs only read-only calls without results, never a started side effect', async () => {
    const log: string[] = []
    const tools = [readTool('shard', log, async () => {}), writeTool(log)]
    const { deps, state } = run(tools, [
      nativeCall('shard', { k: 0 }, 'call_r0'),
      nativeCall('write', { k: 1 }, 'call_w1'),
      nativeCall('shard', { k: 1 }, 'call_r1'),
    ])
    // Persisted states, as storage would hold them; the process dies right after the side
    // effect's `started` record is written.
    const saved: RunState[] = []
    await expect(
      runSlice(state, deps, UNLIMITED, (s, e) => {
        saved.push(JSON.parse(JSON.stringify(s)))
        if (e.action === 'start_call') throw new Error('process died')
      }),
    ).rejects.toThrow('process died')
    const reads = ['end shard 0', 'end shard 1', 'start shard 0', 'start shard 1']
    expect([...log].sort()).toEqual(reads)

    // Resumed from the state saved before the reads had results: they run again, nothing else.
    const beforeReads = parseRunState(saved.find((s) => s.phase === 'act')!)
    if (!beforeReads.ok) throw new Error(beforeReads.error)
    const rerun = await runSlice(beforeReads.state, deps, UNLIMITED, (_s, e) => {
      if (e.action === 'start_call') throw new Error('died again')
    }).catch((err: Error) => err.message)
    expect(rerun).toBe('died again')
    expect(log.slice(4).sort()).toEqual(reads)

    // Resumed from the last saved state (reads done, the side effect started): the reads are not
    // run again and the side effect's outcome is unknown, not run twice.
    const last = parseRunState(saved.at(-1)!)
    if (!last.ok) throw new Error(last.error)
    const out = await runSlice(last.state, deps, UNLIMITED)
    expect(log.slice(8)).toEqual([])
    const calls = toRunResult(out.state).steps[0]!.calls
    expect(calls.map((c) => [c.id, c.kind])).toEqual([
      ['call_r0', 'ok'],
      ['call_w1', 'outcome_unknown'],
      ['call_r1', 'ok'],
    ])
  })
})
