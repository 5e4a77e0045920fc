/**
 * At-least-once alarms and racing people: a duplicated alarm does nothing twice, and
 * of 50 simultaneous approvals exactly one wins and the call runs once.
 */
import { runInDurableObject } from 'cloudflare:test'
import { describe, expect, it } from 'vitest'
import { reply } from '../fakes/fake-openai'
import {
  decide,
  drainAlarms,
  getRun,
  runAlarm,
  startRun,
  stubOf,
  useServiceFakes,
  receiverPost,
  startAwaitingApproval,
} from './harness'
import { watchRun } from './run-watch'

const fakes = useServiceFakes()

/** The alarm handler invoked again, as the platform may (alarms are at-least-once). */
function duplicateAlarm(id: string): Promise<void> {
  return runInDurableObject(stubOf(id), (instance) =>
    (instance as unknown as { alarm(): Promise<void> }).alarm(),
  )
}

function script(): void {
  fakes.ai.enqueue(
    reply.toolCalls([{ id: 'call_calc', name: 'calculator', arguments: { expression: '2 + 2' } }]),
    reply.toolCalls([receiverPost()]),
    reply.text('Done.'),
  )
}

describe('a duplicated alarm', () => {
  it('after every alarm and after the end: the model once per step, the side effect once', async () => {
    script()
    const id = await startRun({ task: 'Add and post', tools: ['calculator', 'http_post'] })
    const advance = async () => {
      while ((await getRun(id)).status === 'running') {
        expect(await runAlarm(id)).toBe(true)
        await duplicateAlarm(id)
      }
    }
    await advance()
    const pending = (await getRun(id)).pendingApprovals[0]!
    // Waiting for a person: extra alarms change nothing.
    const watch = await watchRun(id)
    const stats = async () => ({ bytesWritten: watch.bytesWritten(), steps: await watch.steps() })
    const before = await stats()
    await duplicateAlarm(id)
    await duplicateAlarm(id)
    expect(await stats()).toEqual(before)
    expect(fakes.ai.bodies).toHaveLength(2)

    await decide(id, 'call_post', { decision: 'approve', args_hash: pending.argsHash })
    await advance()
    const done = await getRun(id)
    expect(done.result).toMatchObject({ ok: true, stopReason: 'finish', answer: 'Done.' })
    const written = await stats()
    await duplicateAlarm(id)
    expect(await runAlarm(id)).toBe(false) // nothing scheduled once done
    await duplicateAlarm(id)

    expect(await stats()).toEqual(written)
    expect(await getRun(id)).toEqual(done)
    expect(fakes.ai.bodies).toHaveLength(3)
    expect(done.result.steps.map((s) => s.i)).toEqual([0, 1, 2])
    expect(fakes.receiver.hits).toHaveLength(1)
  })
})

describe('50 concurrent approvals of one call', () => {
  it('one 200, 49 × 409 naming the first decider, one execution', async () => {
    fakes.ai.enqueue(reply.toolCalls([receiverPost()]), reply.text('Done.'))
    const { id, argsHash } = await startAwaitingApproval()

    const responses = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        decide(id, 'call_post', {
          decision: i % 2 ? 'deny' : 'approve',
          args_hash: argsHash,
        }),
      ),
    )
    const bodies = (await Promise.all(responses.map((r) => r.json()))) as {
      decidedBy?: string
      decision?: string
      error?: { code: string; message: string; details: { decidedBy: string } }
    }[]
    const answered = bodies.filter((_, i) => responses[i]!.status === 200)
    const winners = answered.filter((b) => !(b as { replayed?: true }).replayed)
    expect(winners).toHaveLength(1)
    const winner = winners[0]!
    // The same token sending the winning decision again is answered with it (a replay);
    // the other decision is refused, naming who decided.
    expect(answered).toHaveLength(25)
    for (const replay of answered) expect(replay).toMatchObject({ decision: winner.decision })
    const losers = bodies.filter((_, i) => responses[i]!.status === 409)
    expect(losers).toHaveLength(25)
    for (const loser of losers) {
      expect(loser.error).toMatchObject({
        code: 'already_decided',
        details: { decidedBy: winner.decidedBy },
      })
      expect(loser.error!.message).toContain(`by ${winner.decidedBy}`)
    }

    await drainAlarms(id)
    const call = (await getRun(id)).result.steps[0]!.calls[0]!
    expect(call.approval?.decidedBy).toBe(winner.decidedBy)
    expect(fakes.receiver.hits).toHaveLength(winner.decision === 'approved' ? 1 : 0)
  })
})
