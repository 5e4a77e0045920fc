import { framed } from '../fakes/scripted-model'
import { describe, expect, it } from 'vitest'
import {
  argsHash,
  createRunState,
  decideApproval,
  expireApprovals,
  nextApprovalExpiry,
  pendingApprovals,
  runSlice,
  Slice,
  toRunResult,
  transition,
  type RunState,
} from '../../src/kernel/index'
import {
  fakeClock,
  nativeAnswer,
  nativeCall,
  nativeCalls,
  ScriptedModel,
} from '../fakes/scripted-model'
import { deployTool, sliceDeps, UNLIMITED, type Ran } from './harness'

const TTL_S = 3600

function setup() {
  const clock = fakeClock()
  const ran: Ran = []
  const model = new ScriptedModel((_req, turn) => {
    clock.advance(1000)
    return turn === 0
      ? nativeCalls([nativeCall('deploy', { service: 'api' }, 'call_1')], 'Ship it.')
      : nativeAnswer('finished')
  })
  const deps = sliceDeps(model, [deployTool(ran)], clock.now)
  const state = createRunState({
    id: 'run_a',
    task: 'deploy api',
    tools: ['deploy'],
    policy: { mode: 'ask' },
    budget: { approvalTtlSeconds: TTL_S, maxSeconds: 60 },
    now: clock.now(),
  })
  return { clock, ran, model, deps, state }
}

/** Runs until the run waits for a person. */
async function untilApproval() {
  const s = setup()
  const out = await runSlice(s.state, s.deps, UNLIMITED)
  expect(out.end).toBe('awaiting_approval')
  return { ...s, waiting: out.state, hash: await argsHash('deploy', { service: 'api' }) }
}

const decide = (
  state: RunState,
  over: Partial<Parameters<typeof decideApproval>[1]> & { argsHash: string },
) => decideApproval(state, { callId: 'call_1', decision: 'approve', by: 'alice', now: 0, ...over })

describe('approvals', () => {
  it('with policy ask and no hook, the run waits with a pending approval', async () => {
    const { waiting, hash, clock, ran } = await untilApproval()
    expect(waiting.phase).toBe('await_approval')
    expect(ran).toEqual([])
    const pending = pendingApprovals(waiting)
    expect(pending).toHaveLength(1)
    expect(pending[0]!.call).toMatchObject({
      id: 'call_1',
      status: 'awaiting_approval',
      approval: { hash, requestedAt: clock.now(), expiresAt: clock.now() + TTL_S * 1000 },
    })
    expect(nextApprovalExpiry(waiting)).toBe(clock.now() + TTL_S * 1000)
    expect(toRunResult(waiting)).toMatchObject({
      stopReason: null,
      ok: false,
      phase: 'await_approval',
    })
  })

  it('approve → the call runs exactly once and the run finishes', async () => {
    const { waiting, hash, deps, ran, model } = await untilApproval()
    const decided = decide(waiting, { argsHash: hash })
    expect(decided.ok).toBe(true)
    if (!decided.ok) return
    expect(decided.state.phase).toBe('act')
    const out = await runSlice(decided.state, deps, UNLIMITED)
    expect(out.end).toBe('done')
    expect(ran).toEqual([{ name: 'deploy', args: { service: 'api' }, callId: 'call_1' }])
    expect(toRunResult(out.state)).toMatchObject({ ok: true, answer: 'finished' })
    expect(out.state.steps[0]!.calls[0]).toMatchObject({
      observation: 'deployed api',
      approval: { decision: 'approved', decidedBy: 'alice' },
    })
    expect(model.requests).toHaveLength(2)
    // A second click changes nothing and names who decided.
    const again = decide(out.state, { argsHash: hash, by: 'bob' })
    expect(again).toMatchObject({ ok: false, code: 'already_decided', decidedBy: 'alice' })
    expect(ran).toHaveLength(1)
  })

  it('deny → [ToolError] naming the decider, and the tool never runs', async () => {
    const { waiting, hash, deps, ran, model } = await untilApproval()
    const decided = decide(waiting, { argsHash: hash, decision: 'deny', reason: 'not today' })
    if (!decided.ok) throw new Error(decided.message)
    const out = await runSlice(decided.state, deps, UNLIMITED)
    expect(ran).toEqual([])
    expect(out.state.steps[0]!.calls[0]).toMatchObject({ kind: 'denied', status: 'done' })
    expect(model.requests[1]!.messages.at(-1)).toEqual({
      role: 'tool',
      tool_call_id: 'call_1',
      content: framed(
        'deploy',
        '[ToolError] deploy was not run: it was denied by alice ("not today"). Use read-only tools instead, or ask the user for permission.',
      ),
    })
  })

  it.each([
    ['hash_mismatch', { argsHash: 'f00d' }],
    ['not_found', { callId: 'call_404' }],
  ])('refuses a decision: %s', async (code, over) => {
    const { waiting, hash } = await untilApproval()
    const out = decide(waiting, { argsHash: hash, ...over })
    expect(out).toMatchObject({ ok: false, code })
    expect(pendingApprovals(waiting)).toHaveLength(1)
  })

  it('the same decision by the same decider, sent again, is the recorded one (a replay)', async () => {
    const { waiting, hash } = await untilApproval()
    const first = decide(waiting, { argsHash: hash, by: 'carol', decision: 'deny' })
    if (!first.ok) throw new Error(first.message)
    const again = decide(first.state, { argsHash: hash, by: 'carol', decision: 'deny' })
    expect(again).toMatchObject({ ok: true, replayed: true, call: { status: 'denied' } })
    if (again.ok) expect(again.state).toBe(first.state)
    // The other decision, or another decider, is refused naming the first.
    for (const other of [
      { by: 'carol', decision: 'approve' as const },
      { by: 'dave', decision: 'deny' as const },
    ]) {
      expect(decide(first.state, { argsHash: hash, ...other })).toMatchObject({
        ok: false,
        code: 'already_decided',
        decidedBy: 'carol',
      })
    }
  })

  it('an approval past its expiry is refused as expired, even before the alarm closes it', async () => {
    const { waiting, hash, clock } = await untilApproval()
    const expiresAt = pendingApprovals(waiting)[0]!.call.approval!.expiresAt
    const late = decide(waiting, { argsHash: hash, now: expiresAt })
    expect(late).toMatchObject({ ok: false, code: 'approval_expired', expiredAt: expiresAt })
    if (!late.ok) expect(late.message).toContain(new Date(expiresAt).toISOString())
    expect(pendingApprovals(waiting)).toHaveLength(1)
    // Once the alarm has expired it, every decision is told the same.
    const expired = expireApprovals(waiting, expiresAt)
    expect(decide(expired, { argsHash: hash, now: clock.now() })).toMatchObject({
      code: 'approval_expired',
      expiredAt: expiresAt,
    })
  })

  it('already decided names the first decider and their decision', async () => {
    const { waiting, hash } = await untilApproval()
    const first = decide(waiting, { argsHash: hash, decision: 'deny', by: 'carol' })
    if (!first.ok) throw new Error(first.message)
    const second = decide(first.state, { argsHash: hash, by: 'dave' })
    expect(second).toMatchObject({
      ok: false,
      code: 'already_decided',
      decidedBy: 'carol',
      decision: 'denied',
    })
    if (!second.ok) expect(second.message).toContain('carol')
  })

  it('expireApprovals turns a stale approval into a denial with reason expired', async () => {
    const { waiting, deps, clock, ran, model } = await untilApproval()
    const expiry = nextApprovalExpiry(waiting)!
    expect(expireApprovals(waiting, expiry - 1)).toBe(waiting)
    const expired = expireApprovals(waiting, expiry)
    expect(expired.phase).toBe('act')
    expect(expired.steps[0]!.calls[0]!.approval).toMatchObject({
      decision: 'denied',
      decidedBy: 'system',
      reason: 'expired',
    })
    clock.advance(TTL_S * 1000)
    const out = await runSlice(expired, deps, UNLIMITED)
    expect(ran).toEqual([])
    expect(model.requests[1]!.messages.at(-1)!.content).toBe(
      framed(
        'deploy',
        '[ToolError] deploy was not run: the approval request expired with no decision. Use read-only tools instead, or ask the user for permission.',
      ),
    )
    expect(out.state.result).toMatchObject({ ok: true })
  })

  it('a transition while waiting expires the approval once its time has come', async () => {
    const { waiting, deps, clock } = await untilApproval()
    const early = await transition(waiting, new Slice(deps))
    expect(early.state).toBe(waiting)
    expect(early.event.action).toBe('await')
    clock.advance(TTL_S * 1000)
    const late = await transition(waiting, new Slice(deps))
    expect(late.event.action).toBe('expire')
    expect(late.state.steps[0]!.calls[0]!.status).toBe('denied')
  })

  it('waiting for a person is not charged to maxSeconds', async () => {
    const { waiting, hash, deps, clock, ran } = await untilApproval()
    const before = waiting.activeMs
    clock.advance(30 * 60_000) // half an hour, far past the 60 s budget
    const decided = decide(waiting, { argsHash: hash, now: clock.now() })
    if (!decided.ok) throw new Error(decided.message)
    const out = await runSlice(decided.state, deps, UNLIMITED)
    expect(toRunResult(out.state)).toMatchObject({ ok: true, stopReason: 'finish' })
    expect(ran).toHaveLength(1)
    expect(out.state.activeMs - before).toBe(1000) // the second model call only
  })

  it('a cancelled run closes its pending approvals as denied', async () => {
    const { waiting, deps, hash } = await untilApproval()
    const out = await transition({ ...waiting, cancelRequested: true }, new Slice(deps))
    expect(out.state.result).toMatchObject({ ok: false, stopReason: 'cancelled', answer: '' })
    expect(out.state.steps[0]!.calls[0]!.approval).toMatchObject({
      decision: 'denied',
      reason: 'cancelled',
    })
    expect(decide(out.state, { argsHash: hash })).toMatchObject({
      ok: false,
      code: 'already_decided',
    })
  })
})
