import { describe, expect, it } from 'vitest'
import {
  decideApproval,
  pendingApprovals,
  toRunResult,
  type RunState,
} from '../../src/kernel/index'
import { calculator } from '../../tools/calculator'
import { createHttpPostTool } from '../../tools/http-post'
import { reply, type FakeCall } from '../fakes/fake-openai'
import { created, useWire, RECEIVER_HOST, runUntilStill, startRun, toolMessages } from './harness'

const wire = useWire({ [RECEIVER_HOST]: created })

const httpPost = createHttpPostTool({ allowlist: [RECEIVER_HOST] })
const POST: FakeCall = {
  id: 'call_post',
  name: 'http_post',
  arguments: { url: `https://${RECEIVER_HOST}/hooks/deploy`, body: { service: 'order' } },
}
const CALC: FakeCall = { id: 'call_calc', name: 'calculator', arguments: { expression: '6 * 7' } }

function callOf(state: RunState, id: string) {
  return state.steps.at(-1)!.calls.find((c) => c.id === id)!
}

async function waitingRun(order: FakeCall[]) {
  wire.api.enqueue(
    reply.toolCalls(order, { content: 'Compute, then notify.' }),
    reply.text('Notified; 6 * 7 = 42.'),
  )
  const { state, deps } = startRun([calculator, httpPost], wire.model(), {
    protocol: 'native',
    policy: { mode: 'ask' },
  })
  const paused = await runUntilStill(state, deps)
  return { paused, deps }
}

describe('several calls in one turn, one side-effecting, under policy "ask"', () => {
  it.each([
    ['read-only first', [CALC, POST]],
    ['side effect first', [POST, CALC]],
  ])(
    '%s: nothing runs until the pending call is decided (docs/architecture.md#approvals)',
    async (_label, order) => {
      const { paused } = await waitingRun(order)

      expect(paused.end).toBe('awaiting_approval')
      expect(paused.state.phase).toBe('await_approval')
      // The read-only call was classified but not run: every call of the step waits together.
      expect(callOf(paused.state, 'call_calc')).toMatchObject({ status: 'ready' })
      expect(callOf(paused.state, 'call_calc').observation).toBeNull()
      expect(callOf(paused.state, 'call_post')).toMatchObject({ status: 'awaiting_approval' })
      expect(pendingApprovals(paused.state).map((p) => p.call.id)).toEqual(['call_post'])
      expect(wire.outbound.to(RECEIVER_HOST)).toEqual([])
      expect(wire.api.bodies).toHaveLength(1)
    },
  )

  it.each([
    ['read-only first', [CALC, POST]],
    ['side effect first', [POST, CALC]],
  ])(
    '%s: approve → one POST with Idempotency-Key <runId>:<callId>, both results paired',
    async (_label, order) => {
      const { paused, deps } = await waitingRun(order)
      const pending = callOf(paused.state, 'call_post')

      const decided = decideApproval(paused.state, {
        callId: 'call_post',
        decision: 'approve',
        argsHash: pending.approval!.hash,
        by: 'U_APPROVER',
        now: Date.now(),
      })
      expect(decided.ok).toBe(true)
      if (!decided.ok) return
      expect(decided.state.phase).toBe('act')

      const out = await runUntilStill(decided.state, deps)

      expect(toRunResult(out.state)).toMatchObject({
        ok: true,
        answer: 'Notified; 6 * 7 = 42.',
        stopReason: 'finish',
      })
      const posts = wire.outbound.to(RECEIVER_HOST)
      expect(posts).toHaveLength(1)
      expect(posts[0]).toMatchObject({
        method: 'POST',
        url: `https://${RECEIVER_HOST}/hooks/deploy`,
        body: '{"service":"order"}',
        headers: expect.objectContaining({ 'idempotency-key': 'run_int:call_post' }),
      })
      expect(wire.api.violations).toEqual([])
      expect(wire.api.bodies).toHaveLength(2)
      const results = new Map(toolMessages(wire.api.lastBody()))
      expect(toolMessages(wire.api.lastBody()).map(([id]) => id)).toEqual(order.map((c) => c.id))
      expect(results.get('call_calc')).toBe('6 * 7 = 42')
      expect(results.get('call_post')).toBe(
        'HTTP 201 Created (application/json)\n\n{\n  "received": true\n}',
      )
      const trace = toRunResult(out.state)
      expect(trace.steps[0]!.calls.find((c) => c.id === 'call_post')).toMatchObject({
        status: 'done',
        kind: 'ok',
        approval: { decision: 'approved', decidedBy: 'U_APPROVER' },
      })
    },
  )

  it('deny → the POST never reaches the receiver and the model is told who denied it', async () => {
    const { paused, deps } = await waitingRun([CALC, POST])
    const decided = decideApproval(paused.state, {
      callId: 'call_post',
      decision: 'deny',
      argsHash: callOf(paused.state, 'call_post').approval!.hash,
      by: 'U_APPROVER',
      reason: 'not during the freeze',
      now: Date.now(),
    })
    if (!decided.ok) throw new Error(decided.message)

    const out = await runUntilStill(decided.state, deps)

    expect(out.state.result).toMatchObject({ ok: true, stopReason: 'finish' })
    expect(wire.outbound.to(RECEIVER_HOST)).toEqual([])
    const results = new Map(toolMessages(wire.api.lastBody()))
    expect(results.get('call_calc')).toBe('6 * 7 = 42')
    expect(results.get('call_post')).toBe(
      '[ToolError] http_post was not run: it was denied by U_APPROVER ("not during the freeze"). ' +
        'Use read-only tools instead, or ask the user for permission.',
    )
  })

  it('an approval that expires undecided is a denial: the POST is never sent', async () => {
    const { paused, deps } = await waitingRun([POST])
    const expiresAt = callOf(paused.state, 'call_post').approval!.expiresAt

    const out = await runUntilStill(paused.state, { ...deps, now: () => expiresAt + 1 })

    expect(wire.outbound.to(RECEIVER_HOST)).toEqual([])
    expect(toolMessages(wire.api.lastBody())).toEqual([
      [
        'call_post',
        '[ToolError] http_post was not run: the approval request expired with no decision. ' +
          'Use read-only tools instead, or ask the user for permission.',
      ],
    ])
    expect(out.state.steps[0]!.calls[0]!.approval).toMatchObject({
      decision: 'denied',
      reason: 'expired',
    })
  })
})

describe('two side-effecting calls in one turn', () => {
  const SECOND: FakeCall = {
    id: 'call_post2',
    name: 'http_post',
    arguments: { url: `https://${RECEIVER_HOST}/hooks/page`, body: { team: 'oncall' } },
  }

  it('one approval is not enough: nothing is sent until both are decided', async () => {
    const { paused, deps } = await waitingRun([POST, SECOND])
    expect(pendingApprovals(paused.state).map((p) => p.call.id)).toEqual([
      'call_post',
      'call_post2',
    ])
    const approve = (state: RunState, callId: string) => {
      const out = decideApproval(state, {
        callId,
        decision: 'approve',
        argsHash: callOf(state, callId).approval!.hash,
        by: 'U_APPROVER',
        now: Date.now(),
      })
      if (!out.ok) throw new Error(out.message)
      return out.state
    }

    const half = approve(paused.state, 'call_post')
    expect(half.phase).toBe('await_approval')
    const still = await runUntilStill(half, deps)
    expect(still.end).toBe('awaiting_approval')
    expect(wire.outbound.to(RECEIVER_HOST)).toEqual([])

    const out = await runUntilStill(approve(still.state, 'call_post2'), deps)
    expect(out.state.result).toMatchObject({ ok: true })
    expect(wire.outbound.to(RECEIVER_HOST).map((r) => r.headers['idempotency-key'])).toEqual([
      'run_int:call_post',
      'run_int:call_post2',
    ])
    expect(toolMessages(wire.api.lastBody()).map(([id]) => id)).toEqual(['call_post', 'call_post2'])
  })

  it('the waiting run survives a JSON round trip (as stored) and still posts exactly once', async () => {
    const { paused, deps } = await waitingRun([CALC, POST])
    const stored: RunState = JSON.parse(JSON.stringify(paused.state))
    const decided = decideApproval(stored, {
      callId: 'call_post',
      decision: 'approve',
      argsHash: callOf(stored, 'call_post').approval!.hash,
      by: 'U_APPROVER',
      now: Date.now(),
    })
    if (!decided.ok) throw new Error(decided.message)
    const reloaded: RunState = JSON.parse(JSON.stringify(decided.state))

    const out = await runUntilStill(reloaded, deps)

    expect(out.state.result).toMatchObject({ ok: true })
    expect(wire.outbound.to(RECEIVER_HOST)).toHaveLength(1)
    const posted = out.state.steps[0]!.calls.find((c) => c.id === 'call_post')
    expect(posted).toMatchObject({ status: 'done', kind: 'ok', attempts: 1 })
  })
})

describe('a side-effecting call whose arguments fail its schema', () => {
  // docs/architecture.md#step-machine, act: "validate; if it has side effects, apply the confirm policy". A person must
  // never be asked to approve a call that cannot run.
  it('is refused with [ToolError] invalid arguments, with no approval requested', async () => {
    wire.api.enqueue(
      reply.toolCalls([
        { id: 'call_bad', name: 'http_post', arguments: { url: `https://${RECEIVER_HOST}/x` } },
      ]),
      reply.text('fixed nothing'),
    )
    const { state, deps } = startRun([calculator, httpPost], wire.model(), {
      protocol: 'native',
      policy: { mode: 'ask' },
    })

    const out = await runUntilStill(state, deps)

    expect(out.end).toBe('done')
    expect(pendingApprovals(out.state)).toEqual([])
    expect(out.state.steps[0]!.calls[0]!.approval).toBeNull()
    expect(wire.outbound.to(RECEIVER_HOST)).toEqual([])
    const [[, content]] = toolMessages(wire.api.lastBody()) as [[string, string]]
    expect(content).toMatch(/^\[ToolError\] invalid arguments for http_post:/)
    expect(content).toContain('body')
  })
})
