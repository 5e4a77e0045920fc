import * as z from 'zod/mini'
import { describe, expect, it } from 'vitest'
import {
  createRunState,
  parseRunState,
  runSlice,
  Slice,
  toRunResult,
  transition,
  type Protocol,
  type RunState,
} from '../../src/kernel/index'
import {
  fakeClock,
  nativeAnswer,
  nativeCall,
  nativeCalls,
  ScriptedModel,
  textAction,
  textFinish,
} from '../fakes/scripted-model'
import { recordingTool, sliceDeps, UNLIMITED, type Ran } from './harness'

/** What storage gives back: JSON, validated. */
function roundTrip(state: RunState): RunState {
  const parsed = parseRunState(JSON.parse(JSON.stringify(state)))
  if (!parsed.ok) throw new Error(parsed.error)
  return parsed.state
}

function setup(protocol: Protocol, idempotent = false) {
  const clock = fakeClock()
  const ran: Ran = []
  const lookup = recordingTool(ran, {
    name: 'lookup',
    description: 'Look a service up.',
    params: z.object({ q: z.string() }),
    returns: 'Its status.',
    answer: (args) => `status of ${args.q}: degraded`,
  })
  const restart = recordingTool(ran, {
    name: 'restart',
    description: 'Restart a service.',
    params: z.object({ service: z.string() }),
    returns: 'Done.',
    sideEffect: true,
    idempotent,
    answer: (args) => `restarted ${args.service}`,
  })
  const turns =
    protocol === 'native'
      ? [
          nativeCalls([nativeCall('lookup', { q: 'api' }, 'call_look')], 'Check first.'),
          nativeCalls([nativeCall('restart', { service: 'api' }, 'call_restart')], 'Restart it.'),
          nativeAnswer('api restarted'),
        ]
      : [
          textAction('lookup', { q: 'api' }),
          textAction('restart', { service: 'api' }),
          textFinish('api restarted'),
        ]
  const model = new ScriptedModel(turns)
  const deps = sliceDeps(model, [lookup, restart], clock.now)
  const state = createRunState({
    id: 'run_r',
    task: 'fix api',
    tools: ['lookup', 'restart'],
    protocol,
    policy: { mode: 'allow' },
    now: clock.now(),
  })
  return { ran, model, deps, state, restartId: protocol === 'native' ? 'call_restart' : 's1c0' }
}

describe.each<Protocol>(['native', 'text'])('%s protocol: resume from storage', (protocol) => {
  it('continuing from a JSON round-trip after every transition gives the same result', async () => {
    const straight = setup(protocol)
    const expected = await runSlice(straight.state, straight.deps, UNLIMITED)

    const resumed = setup(protocol)
    let stored = roundTrip(resumed.state)
    let invocations = 0
    // One transition per invocation (as if each alarm were evicted right after its write). A
    // started side effect runs in the same invocation as its start record, as runSlice ensures.
    while (stored.phase !== 'done') {
      const out = await runSlice(stored, resumed.deps, { ...UNLIMITED, maxTransitions: 1 }, (s) => {
        stored = roundTrip(s)
      })
      stored = roundTrip(out.state)
      if (++invocations > 50) throw new Error('run did not finish')
    }

    expect(toRunResult(stored)).toEqual(toRunResult(expected.state))
    expect(toRunResult(stored)).toMatchObject({ ok: true, answer: 'api restarted' })
    expect(resumed.model.requests).toHaveLength(3)
    expect(resumed.model.requests).toEqual(straight.model.requests)
    expect(resumed.ran).toEqual(straight.ran)
    expect(resumed.ran.map((r) => r.name)).toEqual(['lookup', 'restart'])
    // think (classifies too), run lookup, think, start + run restart (one invocation), think.
    expect(invocations).toBe(5)
  })

  it('each transition alone, round-tripped, never calls the model twice for one step', async () => {
    const s = setup(protocol)
    let state = roundTrip(s.state)
    const actions: string[] = []
    // One slice, as one invocation would have: only it knows which start records it wrote.
    const slice = new Slice(s.deps)
    while (state.phase !== 'done') {
      const out = await transition(state, slice)
      actions.push(out.event.action)
      // The start record is the one write that must not be read back before its call runs.
      state = out.event.action === 'start_call' ? out.state : roundTrip(out.state)
    }
    expect(actions.filter((a) => a === 'think')).toHaveLength(3)
    expect(actions).toContain('start_call')
    expect(s.model.requests).toHaveLength(3)
    expect(s.ran.map((r) => r.name)).toEqual(['lookup', 'restart'])
    expect(toRunResult(state)).toMatchObject({ ok: true, answer: 'api restarted' })
  })

  it.each([
    [false, 'is not run again: outcome unknown'],
    [true, 'runs again with the same call id (idempotent)'],
  ])('a started side effect read back from storage (idempotent %s) %s', async (idempotent) => {
    const s = setup(protocol, idempotent)
    let state = roundTrip(s.state)
    // Run until the start record is written, then "crash": only the stored copy survives. One
    // invocation until then: a model call's record is only followed by its call in the slice
    // that wrote it.
    const slice = new Slice(s.deps)
    for (;;) {
      const out = await transition(state, slice)
      state = roundTrip(out.state)
      if (out.event.action === 'start_call') break
    }
    expect(state.steps[1]!.calls[0]).toMatchObject({ status: 'started', attempts: 1 })
    expect(s.ran.map((r) => r.name)).toEqual(['lookup'])

    const out = await runSlice(state, s.deps, UNLIMITED)
    const call = out.state.steps[1]!.calls[0]!
    expect(toRunResult(out.state)).toMatchObject({ ok: true })
    if (idempotent) {
      expect(s.ran.filter((r) => r.name === 'restart')).toEqual([
        { name: 'restart', args: { service: 'api' }, callId: s.restartId },
      ])
      expect(call).toMatchObject({ kind: 'ok', observation: 'restarted api', attempts: 2 })
    } else {
      expect(s.ran.map((r) => r.name)).toEqual(['lookup'])
      expect(call.kind).toBe('outcome_unknown')
      expect(call.observation).toBe(
        `[ToolError] outcome unknown: restart (call ${s.restartId}) was started but the run stopped before its result was recorded. It was not run again; check its effect before retrying.`,
      )
    }
    expect(s.model.requests).toHaveLength(3)
  })
})

describe.each([false, true])(
  'cancelled with a started side effect (idempotent %s)',
  (idempotent) => {
    it('read back from storage: reported outcome unknown, not run again, not left started', async () => {
      const s = setup('native', idempotent)
      let state = roundTrip(s.state)
      const slice = new Slice(s.deps) // one invocation until the "crash"
      for (;;) {
        const out = await transition(state, slice)
        state = roundTrip(out.state)
        if (out.event.action === 'start_call') break
      }
      const out = await runSlice({ ...state, cancelRequested: true }, s.deps, UNLIMITED)
      expect(toRunResult(out.state)).toMatchObject({ ok: false, stopReason: 'cancelled' })
      expect(out.state.steps[1]!.calls[0]).toMatchObject({
        status: 'done',
        kind: 'outcome_unknown',
        observation: expect.stringMatching(/^\[ToolError\] outcome unknown: restart/),
      })
      expect(s.ran.map((r) => r.name)).toEqual(['lookup'])
    })

    it('recorded by this process and not run yet: reported not run', async () => {
      const s = setup('native', idempotent)
      const slice = new Slice(s.deps)
      let state = s.state
      for (;;) {
        const out = await transition(state, slice)
        state = out.state
        if (out.event.action === 'start_call') break
      }
      const out = await transition({ ...state, cancelRequested: true }, slice)
      expect(out.state.steps[1]!.calls[0]).toMatchObject({
        status: 'done',
        kind: 'tool_error',
        observation: '[ToolError] restart was not run: the run was cancelled',
      })
      expect(s.ran.map((r) => r.name)).toEqual(['lookup'])
    })
  },
)

describe('parseRunState', () => {
  it('lists the problems of an invalid state', () => {
    const state = createRunState({ task: 't', tools: [] })
    const out = parseRunState({ ...state, v: 99, phase: 'sleeping' })
    expect(out.ok).toBe(false)
    if (!out.ok) {
      expect(out.error).toMatch(/^invalid run state: /)
      expect(out.error).toContain('v: invalid_value')
      expect(out.error).toContain('phase: invalid_value')
    }
  })
})
