import { describe, expect, it } from 'vitest'
import {
  decide,
  drainAlarms,
  getRun,
  getTrace,
  startRun,
  useServiceFakes,
} from '../service/harness'

// The task from the README's demo; the offline model replays the recorded incident.
const TASK = 'The order service 5xx rate jumped from 0.1% to 12%. Find the root cause and fix it.'

// No host registered: the offline demo must not make a single outbound request.
useServiceFakes({ openai: false, receiver: false })

async function runToApproval(): Promise<{ id: string; hash: string }> {
  const id = await startRun({ task: TASK })
  await drainAlarms(id)
  const view = await getRun(id)
  expect(view.status).toBe('awaiting_approval')
  expect(view.stepCount).toBe(4)
  expect(view.pendingApprovals).toHaveLength(1)
  const pending = view.pendingApprovals[0]!
  expect(pending).toMatchObject({
    callId: 'call_demo_6',
    tool: 'rollback_deploy',
    args: { service: 'order', to_version: 'v2.13.2' },
  })
  expect(pending.reason).toContain('max_connections from 50 to 10')
  return { id, hash: pending.argsHash }
}

describe('the offline demo with no API key', () => {
  it('investigates, waits for approval, rolls back once approved, and explains the root cause', async () => {
    const { id, hash } = await runToApproval()
    const res = await decide(id, 'call_demo_6', {
      decision: 'approve',
      args_hash: hash,
    })
    expect(res.status).toBe(200)
    await drainAlarms(id)

    const result = await getTrace(id)
    expect(result).toMatchObject({
      ok: true,
      stopReason: 'finish',
      model: 'demo/scripted-incident',
    })
    expect(result.steps).toHaveLength(5)
    expect(result.answer).toContain('max_connections from 50 to 10')
    expect(result.answer).toContain('rolled the order service back from v2.14.0 to v2.13.2')
    const rollback = result.steps[3]!.calls[0]!
    expect(rollback).toMatchObject({ name: 'rollback_deploy', kind: 'ok', status: 'done' })
    expect(rollback.observation).toContain('rolled back order from v2.14.0 to v2.13.2')
    // Every read-only call before it succeeded.
    const earlier = result.steps.slice(0, 3).flatMap((s) => s.calls)
    expect(earlier.map((c) => c.kind)).toEqual(['ok', 'ok', 'ok', 'ok', 'ok'])
    expect(result.usage.modelCalls).toBe(5)
  })

  it('denied: the answer says the rollback was not performed', async () => {
    const { id, hash } = await runToApproval()
    const res = await decide(id, 'call_demo_6', {
      decision: 'deny',
      args_hash: hash,
      reason: 'change freeze',
    })
    expect(res.status).toBe(200)
    await drainAlarms(id)

    const result = await getTrace(id)
    expect(result).toMatchObject({ ok: true, stopReason: 'finish' })
    expect(result.steps[3]!.calls[0]).toMatchObject({ kind: 'denied' })
    expect(result.answer).toContain('The rollback of order to v2.13.2 was NOT performed')
    expect(result.answer).toContain('denied by api ("change freeze")')
    expect(result.answer).not.toContain('Action taken: rolled')
  })
})
