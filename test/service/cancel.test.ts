/** `POST /v1/runs/:id/cancel`: the run stops at its next transition as `cancelled`. */
import { env } from 'cloudflare:workers'
import { beforeEach, describe, expect, it } from 'vitest'
import { DEFAULT_BUDGET } from '../../src/kernel/budget'
import { runStub } from '../../src/runs/types'
import { FAKE_OPENAI_HOST, reply } from '../fakes/fake-openai'
import { FakeSlack } from '../fakes/fake-slack'
import {
  decide,
  drainAlarms,
  gate,
  getRun,
  postJson,
  runAlarm,
  startRun,
  useServiceFakes,
  receiverPost,
  startAwaitingApproval,
} from './harness'

/** When set, the model's next request waits for it (and fails like fetch when aborted). */
let modelHold: { promise: Promise<void>; arrived: () => void } | undefined
let slack: FakeSlack
/** When set, the Slack API call with this number (1-based) waits until released. */
let slackHold: { nth: number; promise: Promise<void>; arrived: () => void } | undefined

beforeEach(() => {
  modelHold = undefined
  slack = new FakeSlack({ token: 'xoxb-test-token' })
  slackHold = undefined
})

const fakes = useServiceFakes({
  hosts: ({ ai }) => ({
    [FAKE_OPENAI_HOST]: async (req) => {
      const hold = modelHold
      if (hold) {
        modelHold = undefined
        slack = new FakeSlack({ token: 'xoxb-test-token' })
        slackHold = undefined
        hold.arrived()
        await Promise.race([
          hold.promise,
          new Promise((_, reject) => {
            if (req.signal.aborted) reject(req.signal.reason)
            req.signal.addEventListener('abort', () => reject(req.signal.reason), { once: true })
          }),
        ])
      }
      return ai.handler(req)
    },
    'slack.test': async (req) => {
      const hold = slackHold
      if (hold && slack.calls.length + 1 === hold.nth) {
        slackHold = undefined
        hold.arrived()
        await hold.promise
      }
      return slack.handler(req)
    },
  }),
})

const cancel = (id: string, body: unknown = { reason: 'wrong task' }) =>
  postJson(`/v1/runs/${id}/cancel`, body)

describe('cancel', () => {
  it('before the first alarm: stops without calling the model', async () => {
    const id = await startRun({ task: 'Anything', tools: ['calculator'] })
    const res = await cancel(id)
    expect(res.status).toBe(202)
    expect(await res.json()).toMatchObject({ id, status: 'cancelling' })
    await drainAlarms(id)
    const view = await getRun(id)
    expect(view.result).toMatchObject({ ok: false, answer: '', stopReason: 'cancelled' })
    expect(fakes.ai.bodies).toHaveLength(0)
  })

  it('while the model is thinking: the call is abandoned and the run ends cancelled', async () => {
    const held = gate()
    const arrived = new Promise<void>((resolve) => {
      modelHold = { promise: held.promise, arrived: resolve }
    })
    const id = await startRun({ task: 'Anything', tools: ['calculator'] })
    const alarm = runAlarm(id)
    await arrived
    const res = await cancel(id)
    expect(res.status).toBe(202)
    await alarm
    await drainAlarms(id)
    const view = await getRun(id)
    expect(view.status).toBe('failed')
    expect(view.result).toMatchObject({ ok: false, answer: '', stopReason: 'cancelled' })
    expect(view.stepCount).toBe(0)
  })

  it('while awaiting approval: closes the pending approval, nothing runs', async () => {
    fakes.ai.enqueue(reply.toolCalls([receiverPost()]))
    const { id, argsHash } = await startAwaitingApproval()
    expect((await cancel(id)).status).toBe(202)
    await drainAlarms(id)
    const view = await getRun(id)
    expect(view.result).toMatchObject({
      ok: false,
      stopReason: 'cancelled',
      error: 'cancelled by api: wrong task',
    })
    expect(view.pendingApprovals).toEqual([])
    const call = view.result.steps[0]!.calls[0]!
    expect(call.approval).toMatchObject({
      decision: 'denied',
      decidedBy: 'system',
      reason: 'cancelled',
    })
    // A stale approval button cannot run it any more.
    const late = await decide(id, 'call_post', { decision: 'approve', args_hash: argsHash })
    expect(late.status).toBe(409)
    expect(fakes.receiver.hits).toHaveLength(0)
    expect(fakes.ai.bodies).toHaveLength(1)
  })

  it('a decision sent after the cancel, before the run stopped, is refused with 409', async () => {
    fakes.ai.enqueue(reply.toolCalls([receiverPost()]))
    const { id, argsHash } = await startAwaitingApproval()
    expect((await cancel(id)).status).toBe(202)
    const late = await decide(id, 'call_post', { decision: 'approve', args_hash: argsHash })
    expect(late.status).toBe(409)
    expect(await late.json()).toMatchObject({ error: { code: 'run_cancelling' } })
    await drainAlarms(id)
    expect((await getRun(id)).result.stopReason).toBe('cancelled')
    expect(fakes.receiver.hits).toHaveLength(0)
  })

  it('while an approved side effect runs: it completes and is recorded, then the run stops', async () => {
    fakes.ai.enqueue(reply.toolCalls([receiverPost()]))
    const { id, argsHash } = await startAwaitingApproval()
    await decide(id, 'call_post', { decision: 'approve', args_hash: argsHash })
    const arrived = fakes.receiver.hold()
    const alarm = runAlarm(id)
    await arrived
    expect((await cancel(id)).status).toBe(202)
    fakes.receiver.release()
    await alarm
    await drainAlarms(id)
    const view = await getRun(id)
    expect(view.result).toMatchObject({ ok: false, stopReason: 'cancelled' })
    // Cut off halfway, its outcome would be unknown; it ran to the end and says what happened.
    const call = view.result.steps[0]!.calls[0]!
    expect(call).toMatchObject({ status: 'done', kind: 'ok' })
    expect(call.observation).toContain('HTTP 200')
    expect(fakes.receiver.hits).toHaveLength(1)
    expect(fakes.ai.bodies).toHaveLength(1)
  })

  it('while the approval message is being posted to Slack: the next alarm is due at once', async () => {
    fakes.ai.enqueue(reply.toolCalls([receiverPost()]))
    const id = `run_${'5'.repeat(32)}`
    await runStub(env.RUNS, id).start({
      id,
      task: 'Post',
      tools: ['http_post'],
      budget: DEFAULT_BUDGET,
      protocol: 'native',
      policy: { mode: 'ask' },
      requestedBy: 'slack:U123',
      owner: null,
      slack: { channel: 'C123', userId: 'U123' },
    })
    // Call 1 is "started"; call 2 is the approval message, posted after the slice.
    const held = gate()
    const arrived = new Promise<void>((resolve) => {
      slackHold = { nth: 2, promise: held.promise, arrived: resolve }
    })
    const alarm = runAlarm(id)
    await arrived
    expect((await getRun(id)).status).toBe('awaiting_approval')
    expect((await cancel(id)).status).toBe(202)
    held.open()
    await alarm
    await drainAlarms(id)
    const view = await getRun(id)
    expect(view.result).toMatchObject({ ok: false, stopReason: 'cancelled' })
    expect(view.pendingApprovals).toEqual([])
    expect(fakes.receiver.hits).toHaveLength(0)
  })

  it('after the run finished: 409 run_finished', async () => {
    fakes.ai.enqueue(reply.text('Done.'))
    const id = await startRun({ task: 'Anything', tools: ['calculator'] })
    await drainAlarms(id)
    const res = await cancel(id, {})
    expect(res.status).toBe(409)
    expect(await res.json()).toMatchObject({ error: { code: 'run_finished' } })
    expect((await getRun(id)).result).toMatchObject({ ok: true, stopReason: 'finish' })
  })
})
