/**
 * The run survives the death of its Durable Object at every point: after each kind of
 * transition, and in the middle of a model call or a side effect. Afterwards the run finishes,
 * the model was asked once per recorded step, no side effect ran twice, and `outcome unknown`
 * appears exactly when a non-idempotent side effect was started and its result never recorded.
 *
 * Killing the object while an alarm awaits a promise of this isolate is not possible here:
 * `abortAllDurableObjects()` then crashes workerd ("Promise callback destroyed itself") and
 * `evictDurableObject()` waits for the alarm to drain. A death between two writes is therefore
 * made exact another way: the test copies the object's rows at the moment a transition is
 * persisted (right after that transition's transaction, on the object's own SQL handle, see
 * ./run-watch.ts), lets the
 * slice end, writes the copy back and kills the object. Storage is then byte for byte what the
 * object had written when it died, and whatever ran after that point (a side effect, a model
 * call) did happen.
 */
import { framed } from '../fakes/scripted-model'
import { abortAllDurableObjects, evictDurableObject, runInDurableObject } from 'cloudflare:test'
import { describe, expect, it } from 'vitest'
import { reply } from '../fakes/fake-openai'
import { readSse } from '../events/sse'
import {
  api,
  AUTH,
  decide,
  drainAlarms,
  runAlarm,
  getRun,
  getTrace,
  RECEIVER,
  startRun,
  stubOf,
  useServiceFakes,
} from './harness'
import { saved, watchRun, type ChangeMatch } from './run-watch'

type Kill = 'evict' | 'abort'

const fakes = useServiceFakes()
/**
 * Ends the alarm's slice right after the first saved change `match` accepts: the clock moves past
 * the slice's wall budget (5 minutes), so the slice checkpoints there. The jump comes after the
 * transition was timed, so it is not charged to the run.
 */
async function stopAfter(id: string, match: ChangeMatch) {
  return (await watchRun(id)).once(match, () => fakes.clock.advance(10 * 60_000))
}

type Rows = { run: { k: string; v: string }[]; step: { i: number; json: string }[] }

/**
 * Arms a copy of the run's rows at the moment the first transition `match` accepts is written.
 * The copy is read through the running object's own SQL handle, inside that transition.
 */
async function snapshotAt(id: string, match: ChangeMatch) {
  let sql: SqlStorage | undefined
  await runInDurableObject(stubOf(id), (_instance, state) => {
    sql = state.storage.sql
  })
  let rows: Rows | undefined
  const hook = (await watchRun(id)).once(match, () => {
    rows = {
      run: sql!.exec<{ k: string; v: string }>('SELECT k, v FROM run').toArray(),
      step: sql!.exec<{ i: number; json: string }>('SELECT i, json FROM step').toArray(),
    }
  })
  return {
    /**
     * Writes the copy back: the object's storage as it was right after that transition, with
     * its alarm due again (the platform retries an alarm whose invocation died).
     */
    restore: async () => {
      expect(hook.fired(), 'the snapshot transition never happened').toBe(true)
      await runInDurableObject(stubOf(id), (_instance, state) => {
        const db = state.storage.sql
        db.exec('DELETE FROM step')
        for (const r of rows!.step) db.exec('INSERT INTO step (i, json) VALUES (?, ?)', r.i, r.json)
        db.exec('DELETE FROM run')
        for (const r of rows!.run) db.exec('INSERT INTO run (k, v) VALUES (?, ?)', r.k, r.v)
        return state.storage.setAlarm(Date.now())
      })
    },
  }
}

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

const TASK = { task: 'Compute and record', tools: ['calculator', 'http_post'] }

/** Step 0: calculator (read-only); step 1: http_post (approval); step 2: the answer. */
function scriptModel(): void {
  fakes.ai.enqueue(
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
  const result = await getTrace(id)
  expect(result).toMatchObject({ ok: true, answer: 'Recorded 42.', stopReason: 'finish' })
  expect(result.steps.map((s) => s.i)).toEqual([0, 1, 2])
  // One answered model call per step; a request killed in flight is the only extra one.
  expect(fakes.ai.bodies).toHaveLength(options.modelRequests ?? 3)
  expect(fakes.ai.pending).toBe(0)
  expect(result.usage.modelCalls).toBe(3)
  expect(fakes.receiver.executions()).toBe(1)
  expect(new Set(fakes.receiver.hits.map((h) => h.key))).toEqual(new Set([`${id}:call_post`]))
  const kinds = result.steps.flatMap((s) => s.calls.map((c) => c.kind))
  expect(kinds).toEqual(['ok', 'ok'])
  expect(fakes.ai.violations).toEqual([])
  return result
}

/** Each kind of transition, and where the run must stand when it is killed right after it. */
const afterTransitions: [string, ChangeMatch, { phase: string; stepCount: number }][] = [
  ['think (step 0)', saved.think(0), { phase: 'act', stepCount: 1 }],
  ['run_call calculator', saved.ranCall('calculator'), { phase: 'think', stepCount: 1 }],
  ['think (step 1) → await_approval', saved.think(1), { phase: 'await_approval', stepCount: 2 }],
  ['run_call http_post', saved.ranCall('http_post'), { phase: 'think', stepCount: 2 }],
  ['finish', saved.finished('finish'), { phase: 'done', stepCount: 3 }],
]

describe.each<Kill>(['evict', 'abort'])('killed by %s', (how) => {
  it.each(afterTransitions)('after %s: resumes where it stopped', async (_name, match, at) => {
    scriptModel()
    const id = await startRun(TASK)
    const trigger = await stopAfter(id, match)
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
    expect(fakes.receiver.hits).toHaveLength(1)
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
    expect(fakes.receiver.hits).toHaveLength(1)
    await expectFinishedOnce(id)
  })

  it('between the model call and its record: asks again for that step only', async () => {
    scriptModel()
    fakes.ai.enqueue(reply.text('Recorded 42.')) // the answer the dead object never recorded is asked again
    const id = await startRun(TASK)
    await drainAlarms(id)
    const pending = (await getRun(id)).pendingApprovals[0]!
    await decide(id, 'call_post', { decision: 'approve', args_hash: pending.argsHash })
    const before = await snapshotAt(id, saved.ranCall('http_post'))
    await drainAlarms(id) // the model answers step 2; then the object "dies" before recording it
    await before.restore()
    await kill(id, how)
    expect(await getRun(id)).toMatchObject({ phase: 'think', stepCount: 2 })
    await drainAlarms(id)
    await expectFinishedOnce(id, { modelRequests: 4 })
  })

  it('during a model call: the lost call is counted and estimated, and asked again once', async () => {
    scriptModel()
    fakes.ai.enqueue(reply.text('Recorded 42.')) // the answer the dead object never recorded is asked again
    const id = await startRun(TASK)
    await drainAlarms(id)
    const pending = (await getRun(id)).pendingApprovals[0]!
    await decide(id, 'call_post', { decision: 'approve', args_hash: pending.argsHash })
    // The record of step 2's model call is persisted before the call goes out.
    const before = await snapshotAt(id, saved.modelCallStarted(2))
    await drainAlarms(id) // the model answers step 2; then the object "dies" before recording it
    await before.restore()
    await kill(id, how)
    expect(await getRun(id)).toMatchObject({ phase: 'think', stepCount: 2 })
    await drainAlarms(id)
    const result = await getTrace(id)
    expect(result).toMatchObject({ ok: true, answer: 'Recorded 42.', stopReason: 'finish' })
    // Every request the provider got is in the trace, the lost one's tokens estimated.
    expect(fakes.ai.bodies).toHaveLength(4)
    expect(result.usage).toMatchObject({ modelCalls: 4, lostModelCalls: 1, estimated: true })
    expect(result.usage.lostPromptTokens).toBeGreaterThan(0)
    expect(result.steps.map((s) => s.lostModelCalls)).toEqual([0, 0, 1])
    expect(fakes.receiver.executions()).toBe(1)
    expect(fakes.ai.violations).toEqual([])
  })

  it('during a streamed model call: its live text is attempt 1, the call made again streams as attempt 2', async () => {
    fakes.ai.enqueue(reply.text('Words nobody stores.'), reply.text('Words that are kept.'))
    const id = await startRun({ task: 'Say it', tools: ['calculator'] })
    const events = () => api(`/v1/runs/${id}/events`, { headers: AUTH })
    const first = readSse(await events())
    await first.until((e) => e.length === 1)
    const before = await snapshotAt(id, saved.modelCallStarted(0))
    await drainAlarms(id) // the model streams its whole reply; then the object "dies" before recording it
    await first.toEnd()
    await before.restore()
    // The events written with the lost reply go too (the snapshot keeps the state's rows only).
    await runInDurableObject(stubOf(id), (_instance, state) => {
      state.storage.sql.exec('DELETE FROM event WHERE seq > 1')
    })
    await kill(id, how)
    const again = readSse(await events())
    await again.until((e) => e.length === 1)
    await drainAlarms(id)
    await again.toEnd()
    expect(await getTrace(id)).toMatchObject({ ok: true, answer: 'Words that are kept.' })
    // The lost call's pieces say attempt 1; the call made again for the same step says 2.
    const text = (deltas: typeof first.deltas) => deltas.map((d) => d.data.delta).join('')
    expect(first.deltas.map((d) => [d.data.step, d.data.attempt])).toContainEqual([0, 1])
    expect(first.deltas.every((d) => d.data.attempt === 1)).toBe(true)
    expect(text(first.deltas)).toBe('Words nobody stores.')
    expect(again.deltas.length).toBeGreaterThan(0)
    expect(again.deltas.every((d) => d.data.step === 0 && d.data.attempt === 2)).toBe(true)
    expect(text(again.deltas)).toBe('Words that are kept.')
  })

  it('between started and the result of http_post (idempotent): retries with the same key', async () => {
    scriptModel()
    const id = await startRun(TASK)
    await drainAlarms(id)
    const pending = (await getRun(id)).pendingApprovals[0]!
    await decide(id, 'call_post', { decision: 'approve', args_hash: pending.argsHash })
    const started = await snapshotAt(id, saved.startedCall())
    await stopAfter(id, saved.ranCall('http_post'))
    await runAlarm(id) // started, sent, result recorded: then storage goes back to "started"
    expect(fakes.receiver.hits).toHaveLength(1)
    await started.restore()
    await kill(id, how)
    const call = (await getTrace(id)).steps[1]!.calls[0]!
    expect(call).toMatchObject({ id: 'call_post', status: 'started', observation: '' })
    await drainAlarms(id)
    // Sent twice with one key: a deduplicating server performs it once.
    expect(fakes.receiver.hits.map((h) => h.key)).toEqual([`${id}:call_post`, `${id}:call_post`])
    await expectFinishedOnce(id)
  })

  it('between started and the result of rollback_deploy (not idempotent): outcome unknown', async () => {
    fakes.ai.enqueue(
      reply.toolCalls([
        {
          id: 'call_rollback',
          name: 'rollback_deploy',
          arguments: { service: 'order', to_version: 'v2.13.2', reason: 'pool cut to 10' },
        },
      ]),
      reply.text('The rollback may or may not have happened; check the deploy.'),
    )
    const id = await startRun({ task: 'Roll back order', tools: ['rollback_deploy'] })
    await drainAlarms(id)
    const pending = (await getRun(id)).pendingApprovals[0]!
    await decide(id, 'call_rollback', { decision: 'approve', args_hash: pending.argsHash })
    const started = await snapshotAt(id, saved.startedCall())
    const ran = await stopAfter(id, saved.ranCall('rollback_deploy'))
    await runAlarm(id)
    expect(ran.fired()).toBe(true)
    await started.restore()
    await kill(id, how)
    await drainAlarms(id)

    const result = await getTrace(id)
    expect(result).toMatchObject({ ok: true, stopReason: 'finish' })
    const call = result.steps[0]!.calls[0]!
    expect(call.kind).toBe('outcome_unknown')
    expect(call.observation).toMatch(
      /^\[ToolError\] outcome unknown: rollback_deploy \(call call_rollback\) was started/,
    )
    expect(call.observation).toContain('It was not run again')
    // The model was told, once per step.
    expect(fakes.ai.bodies).toHaveLength(2)
    expect(fakes.ai.bodies[1]!.messages.at(-1)).toMatchObject({
      role: 'tool',
      tool_call_id: 'call_rollback',
      content: framed('rollback_deploy', call.observation),
    })
  })

  it('rollback_deploy with no death between started and result: its result, never unknown', async () => {
    fakes.ai.enqueue(
      reply.toolCalls([
        {
          id: 'call_rollback',
          name: 'rollback_deploy',
          arguments: { service: 'order', to_version: 'v2.13.2', reason: 'pool cut to 10' },
        },
      ]),
      reply.text('Rolled back.'),
    )
    const id = await startRun({ task: 'Roll back order', tools: ['rollback_deploy'] })
    await drainAlarms(id)
    const pending = (await getRun(id)).pendingApprovals[0]!
    await decide(id, 'call_rollback', { decision: 'approve', args_hash: pending.argsHash })
    await kill(id, how)
    // A slice spent at `started` still runs the call: it never checkpoints in between.
    const started = await stopAfter(id, saved.startedCall())
    await drainAlarms(id)
    expect(started.fired()).toBe(true)
    const call = (await getTrace(id)).steps[0]!.calls[0]!
    expect(call.kind).toBe('ok')
    expect(call.observation).toContain('rolled back order from v2.14.0 to v2.13.2')
  })
})
