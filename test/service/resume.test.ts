/**
 * The run survives the death of its Durable Object at every point (issue 3): after each kind of
 * transition, and in the middle of a model call or a side effect. Afterwards the run finishes,
 * the model was asked once per recorded step, no side effect ran twice, and `outcome unknown`
 * appears exactly when a non-idempotent side effect was started and its result never recorded.
 */
import {
  abortAllDurableObjects,
  evictDurableObject,
  runDurableObjectAlarm,
  runInDurableObject,
} from 'cloudflare:test'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { RunResult } from '../../src/kernel/result'
import { FakeOpenAI, FAKE_OPENAI_HOST, reply } from '../fakes/fake-openai'
import { Outbound } from '../fakes/outbound'
import {
  api,
  AUTH,
  captureLogs,
  decide,
  drainAlarms,
  runAlarm,
  gate,
  getRun,
  Receiver,
  RECEIVER,
  startRun,
  stubOf,
  TestClock,
} from './harness'

type Kill = 'evict' | 'abort'

let clock: TestClock
let ai: FakeOpenAI
let receiver: Receiver
let outbound: Outbound
let logs: ReturnType<typeof captureLogs>
/** When set, the model's next request waits here (and fails like fetch if its signal aborts). */
let modelHold: { promise: Promise<void>; open: () => void; arrived: () => void } | undefined

beforeEach(() => {
  clock = new TestClock()
  ai = new FakeOpenAI()
  receiver = new Receiver()
  modelHold = undefined
  logs = captureLogs()
  outbound = new Outbound()
    .on(FAKE_OPENAI_HOST, async (req) => {
      const hold = modelHold
      if (hold) {
        modelHold = undefined
        hold.arrived()
        await hold.promise
      }
      return ai.handler(req)
    })
    .on(RECEIVER, receiver.handler)
    .install()
})

afterEach(() => {
  outbound.restore()
  clock.restore()
  vi.restoreAllMocks()
})

/** Kills the run's object; asserts a fresh instance answers afterwards. */
async function kill(id: string, how: Kill): Promise<void> {
  await runInDurableObject(stubOf(id), (instance) => {
    ;(instance as unknown as { marker?: number }).marker = 1
  })
  if (how === 'evict') await evictDurableObject(stubOf(id))
  else await abortAllDurableObjects()
  // Stubs made before an abort are broken: every call below makes a fresh one.
  const marker = await runInDurableObject(
    stubOf(id),
    (instance) => (instance as unknown as { marker?: number }).marker,
  )
  expect(marker, 'the object was not restarted').toBeUndefined()
}

/** What the platform does after an alarm invocation died: it runs the alarm again. */
async function retryAlarm(id: string): Promise<void> {
  await runInDurableObject(stubOf(id), (instance) => (instance as { alarm(): Promise<void> }).alarm())
}

/**
 * Ends the alarm's slice right after the first transition `match` accepts: the log line of that
 * transition moves the clock past the slice's wall budget (5 minutes), so the slice checkpoints
 * there. The jump happens after the transition was timed, so it is not charged to the run.
 */
function stopAfter(match: (line: Record<string, unknown>) => boolean): { fired: () => boolean } {
  let fired = false
  logs.mockImplementation((line: unknown) => {
    if (fired || typeof line !== 'string') return
    const parsed = JSON.parse(line) as Record<string, unknown>
    if (parsed.msg === 'transition' && match(parsed)) {
      fired = true
      clock.advance(10 * 60_000)
    }
  })
  return { fired: () => fired }
}

async function trace(id: string): Promise<RunResult> {
  const res = await api(`/v1/runs/${id}/trace`, { headers: AUTH })
  expect(res.status).toBe(200)
  return (await res.json()) as RunResult
}

const TASK = { task: 'Compute and record', tools: ['calculator', 'http_post'] }

/** Step 0: calculator (read-only); step 1: http_post (approval); step 2: the answer. */
function scriptModel(): void {
  ai.enqueue(
    reply.toolCalls([{ id: 'call_calc', name: 'calculator', arguments: { expression: '6 * 7' } }]),
    reply.toolCalls(
      [
        {
          id: 'call_post',
          name: 'http_post',
          arguments: { url: `https://${RECEIVER}/record`, body: { value: 42 } },
        },
      ],
      { content: 'Record 42.' },
    ),
    reply.text('Recorded 42.'),
  )
}

async function expectFinishedOnce(id: string, options: { modelRequests?: number } = {}) {
  const result = await trace(id)
  expect(result).toMatchObject({ ok: true, answer: 'Recorded 42.', stopReason: 'finish' })
  expect(result.steps.map((s) => s.i)).toEqual([0, 1, 2])
  // One answered model call per step; a request killed in flight is the only extra one.
  expect(ai.bodies).toHaveLength(options.modelRequests ?? 3)
  expect(ai.pending).toBe(0)
  expect(result.usage.modelCalls).toBe(3)
  expect(receiver.executions()).toBe(1)
  expect(new Set(receiver.hits.map((h) => h.key))).toEqual(new Set([`${id}:call_post`]))
  const kinds = result.steps.flatMap((s) => s.calls.map((c) => c.kind))
  expect(kinds).toEqual(['ok', 'ok'])
  expect(ai.violations).toEqual([])
  return result
}

/** Each kind of transition, and where the run must stand when it is killed right after it. */
const afterTransitions: [
  string,
  (l: Record<string, unknown>) => boolean,
  { phase: string; stepCount: number },
][] = [
  ['think (step 0)', (l) => l.action === 'think' && l.step === 0, { phase: 'act', stepCount: 1 }],
  [
    'classify (step 0, read-only)',
    (l) => l.action === 'classify' && l.step === 0,
    { phase: 'act', stepCount: 1 },
  ],
  [
    'run_call calculator',
    (l) => l.action === 'run_call' && l.tool === 'calculator',
    { phase: 'think', stepCount: 1 },
  ],
  ['think (step 1)', (l) => l.action === 'think' && l.step === 1, { phase: 'act', stepCount: 2 }],
  [
    'classify → await_approval',
    (l) => l.action === 'classify' && l.step === 1,
    { phase: 'await_approval', stepCount: 2 },
  ],
  [
    'run_call http_post',
    (l) => l.action === 'run_call' && l.tool === 'http_post',
    { phase: 'think', stepCount: 2 },
  ],
  ['finish', (l) => l.stopReason === 'finish', { phase: 'done', stepCount: 3 }],
]

describe.each<Kill>(['evict', 'abort'])('killed by %s', (how) => {
  it.each(afterTransitions)('after %s: resumes where it stopped', async (_name, match, at) => {
    scriptModel()
    const trigger = stopAfter(match)
    const id = await startRun(TASK)
    let killed = false
    const advance = async () => {
      for (let n = 0; n < 20 && (await getRun(id)).status === 'running'; n++) {
        expect(await runAlarm(id)).toBe(true)
        if (trigger.fired() && !killed) {
          const view = await getRun(id)
          expect({ phase: view.phase, stepCount: view.stepCount }).toEqual(at)
          await kill(id, how)
          killed = true
        }
      }
    }
    await advance()
    const pending = (await getRun(id)).pendingApprovals[0]!
    expect(pending.callId).toBe('call_post')
    const res = await decide(id, 'call_post', { decision: 'approve', args_hash: pending.argsHash })
    expect(res.status).toBe(200)
    await advance()
    expect(killed).toBe(true)
    expect(receiver.hits).toHaveLength(1)
    await expectFinishedOnce(id)
  })

  it('after the approval is recorded: runs the approved call once', async () => {
    scriptModel()
    const id = await startRun(TASK)
    await drainAlarms(id)
    const pending = (await getRun(id)).pendingApprovals[0]!
    await decide(id, 'call_post', { decision: 'approve', args_hash: pending.argsHash })
    await kill(id, how)
    expect((await getRun(id)).status).toBe('running')
    await drainAlarms(id)
    expect(receiver.hits).toHaveLength(1)
    await expectFinishedOnce(id)
  })

  it('in the middle of a model call: asks again for that step only', async () => {
    scriptModel()
    const id = await startRun(TASK)
    await drainAlarms(id) // steps 0 and 1 recorded; waits for approval
    const pending = (await getRun(id)).pendingApprovals[0]!
    await decide(id, 'call_post', { decision: 'approve', args_hash: pending.argsHash })
    const held = gate() // never opened: the killed request gets no answer
    const arrived = new Promise<void>((resolve) => {
      modelHold = { ...held, arrived: resolve }
    })
    const alarm = runDurableObjectAlarm(stubOf(id)).catch((err: unknown) => err)
    await arrived // the post ran; the model call for step 2 is in flight
    if (how === 'abort') await abortAllDurableObjects()
    else await evictDurableObject(stubOf(id))
    await alarm
    await retryAlarm(id)
    await drainAlarms(id)
    // The killed request never reached the fake, so it was not answered: 3 answered in all.
    expect(outbound.to(FAKE_OPENAI_HOST)).toHaveLength(4)
    await expectFinishedOnce(id)
  })

  it('in the middle of http_post (idempotent): retries once with the same Idempotency-Key', async () => {
    scriptModel()
    const id = await startRun(TASK)
    await drainAlarms(id)
    const pending = (await getRun(id)).pendingApprovals[0]!
    await decide(id, 'call_post', { decision: 'approve', args_hash: pending.argsHash })
    const arrived = receiver.hold()
    const alarm = runDurableObjectAlarm(stubOf(id)).catch((err: unknown) => err)
    await arrived
    if (how === 'abort') await abortAllDurableObjects()
    else await evictDurableObject(stubOf(id))
    await alarm
    receiver.release()
    await retryAlarm(id)
    await drainAlarms(id)
    // Sent twice with one key: a deduplicating server performs it once.
    expect(receiver.hits.map((h) => h.key)).toEqual([`${id}:call_post`, `${id}:call_post`])
    await expectFinishedOnce(id)
  })
})
