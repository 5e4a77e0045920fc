/**
 * Honest accounting after crashes: a model call's record is persisted before the
 * call is made, so a call whose answer was lost to a crash, and that is made again, is counted
 * (its prompt tokens estimated and marked as such), and a crash loop cannot evade the budgets.
 */
import * as z from 'zod/mini'
import { describe, expect, it } from 'vitest'
import {
  createRunState,
  parseRunState,
  runSlice,
  Slice,
  toRunResult,
  transition,
  type Deps,
  type RunState,
} from '../../src/kernel/index'
import { nativeAnswer, nativeCall, nativeCalls, ScriptedModel } from '../fakes/scripted-model'
import { recordingTool, sliceDeps, UNLIMITED, type Ran } from './harness'

/** What storage gives back: JSON, validated. */
function roundTrip(state: RunState): RunState {
  const parsed = parseRunState(JSON.parse(JSON.stringify(state)))
  if (!parsed.ok) throw new Error(parsed.error)
  return parsed.state
}

function setup(budget: Parameters<typeof createRunState>[0]['budget'] = {}) {
  const ran: Ran = []
  const lookup = recordingTool(ran, {
    name: 'lookup',
    description: 'Look a service up.',
    params: z.object({ q: z.string() }),
    returns: 'Its status.',
    answer: (args) => `status of ${args.q}: degraded`,
  })
  // The model answers by turn, so a call made again for a step gets that step's answer again.
  const model = new ScriptedModel([
    nativeCalls([nativeCall('lookup', { q: 'api' }, 'call_look')], 'Check first.'),
    nativeAnswer('api is degraded'),
  ])
  const deps: Deps = sliceDeps(model, [lookup], () => 1_700_000_000_000)
  const state = createRunState({ task: 'How is api?', tools: ['lookup'], budget })
  return { ran, model, deps, state }
}

/**
 * One invocation that dies while the model answers: it writes the call's record (stored), makes
 * the call, and the answer never reaches storage. Returns the stored state.
 */
async function dieDuringModelCall(stored: RunState, deps: Deps): Promise<RunState> {
  const slice = new Slice(deps)
  const started = await transition(stored, slice)
  if (started.event.action !== 'model_call_started') return roundTrip(started.state)
  await transition(started.state, slice) // the model answers; the reply is lost with the process
  return roundTrip(started.state)
}

describe('a model call whose answer was lost to a crash', () => {
  it('is counted when it is made again: modelCalls, estimated prompt tokens, the step', async () => {
    const s = setup()
    // Step 0 completes normally; the process dies during step 1's model call.
    let stored = roundTrip(
      (await runSlice(s.state, s.deps, { ...UNLIMITED, maxTransitions: 3 })).state,
    )
    expect(stored).toMatchObject({ phase: 'think', modelCall: null })
    expect(stored.steps).toHaveLength(1)
    stored = await dieDuringModelCall(stored, s.deps)
    expect(stored.modelCall).toMatchObject({ step: 1, attempt: 1 })
    const lostTokens = stored.modelCall!.promptTokens
    expect(lostTokens).toBeGreaterThan(0)
    expect(s.model.requests).toHaveLength(2)
    const before = stored.usage

    const out = await runSlice(stored, s.deps, UNLIMITED)
    const trace = toRunResult(out.state)
    expect(trace).toMatchObject({ ok: true, answer: 'api is degraded' })
    // Every request the provider received is in the trace: 3 calls, one of them lost.
    expect(s.model.requests).toHaveLength(3)
    expect(trace.usage).toMatchObject({
      modelCalls: 3,
      lostModelCalls: 1,
      lostPromptTokens: lostTokens,
      estimated: true,
    })
    const step1 = out.state.steps[1]!
    expect(trace.usage.promptTokens).toBe(before.promptTokens + lostTokens + step1.promptTokens)
    expect(trace.steps.map((st) => st.lostModelCalls)).toEqual([0, 1])
    // The step was recorded once, and the tool ran once.
    expect(out.state.steps).toHaveLength(2)
    expect(s.ran).toHaveLength(1)
    expect(out.state.modelCall).toBeNull()
  })

  it('without a crash nothing is counted twice and nothing is estimated', async () => {
    const s = setup()
    const out = await runSlice(s.state, s.deps, UNLIMITED)
    expect(toRunResult(out.state).usage).toMatchObject({
      modelCalls: 2,
      lostModelCalls: 0,
      lostPromptTokens: 0,
    })
    expect(s.model.requests).toHaveLength(2)
  })

  it('a crash loop cannot evade the token budget: the lost calls use it up', async () => {
    const s = setup()
    // Room for a few requests of this run, and no more.
    const probe = await transition(s.state, new Slice(s.deps))
    const perCall = probe.state.modelCall!.promptTokens
    const limited = { ...s.state, budget: { ...s.state.budget, maxPromptTokens: perCall * 4 } }
    let stored = roundTrip(limited)
    for (let crashes = 0; stored.phase !== 'done'; crashes++) {
      if (crashes > 20) throw new Error('the crash loop was never stopped')
      stored = await dieDuringModelCall(stored, s.deps)
    }
    const trace = toRunResult(stored)
    expect(trace).toMatchObject({ ok: false, stopReason: 'token_budget' })
    expect(trace.steps).toHaveLength(0)
    // Each request the provider got is counted, and the budget held.
    expect(trace.usage.modelCalls).toBe(s.model.requests.length)
    expect(trace.usage.lostModelCalls).toBe(s.model.requests.length)
    expect(trace.usage.promptTokens).toBeLessThanOrEqual(perCall * 4)
    expect(s.model.requests.length).toBe(4)
  })

  it('a crash loop cannot evade the cost budget: the lost calls are charged', async () => {
    const s = setup({ maxCostUsd: 0.01 })
    const deps: Deps = { ...s.deps, pricing: { promptPer1K: 1, completionPer1K: 1 } }
    let stored = roundTrip(s.state)
    for (let crashes = 0; stored.phase !== 'done'; crashes++) {
      if (crashes > 20) throw new Error('the crash loop was never stopped')
      stored = await dieDuringModelCall(stored, deps)
    }
    const trace = toRunResult(stored)
    expect(trace).toMatchObject({ ok: false, stopReason: 'cost_budget' })
    expect(trace.usage.costUsd).toBeGreaterThanOrEqual(0.01)
    expect(trace.usage.modelCalls).toBe(s.model.requests.length)
  })

  it('a run cancelled before the call is made again still counts it', async () => {
    const s = setup()
    const stored = await dieDuringModelCall(roundTrip(s.state), s.deps)
    const lostTokens = stored.modelCall!.promptTokens
    const out = await runSlice({ ...stored, cancelRequested: true }, s.deps, UNLIMITED)
    const trace = toRunResult(out.state)
    expect(trace).toMatchObject({ ok: false, stopReason: 'cancelled' })
    expect(s.model.requests).toHaveLength(1)
    expect(trace.usage).toMatchObject({
      modelCalls: 1,
      lostModelCalls: 1,
      lostPromptTokens: lostTokens,
      promptTokens: lostTokens,
      estimated: true,
    })
    expect(out.state.modelCall).toBeNull()
  })

  it('a call whose answer a cancel dropped (aborted in flight) is counted', async () => {
    const s = setup()
    const abort = new AbortController()
    const asked = s.model.complete.bind(s.model)
    const model = {
      name: s.model.name,
      complete: async (req: Parameters<typeof asked>[0]) => {
        await asked(req)
        abort.abort(new Error('cancelled by the caller'))
        throw new Error('aborted')
      },
    }
    const deps: Deps = { ...s.deps, model, signal: abort.signal }
    const out = await runSlice(s.state, deps, UNLIMITED)
    const trace = toRunResult(out.state)
    expect(trace).toMatchObject({ ok: false, stopReason: 'cancelled' })
    expect(s.model.requests).toHaveLength(1)
    expect(trace.usage).toMatchObject({ modelCalls: 1, lostModelCalls: 1, estimated: true })
    expect(trace.usage.lostPromptTokens).toBeGreaterThan(0)
  })
})
