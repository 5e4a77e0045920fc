/**
 * A child's `start` call that fails between the parent's object and the child's
 * (docs/agents.md#delegation), through the Worker's fetch. The call may have created the child
 * (only its answer was lost) or not (lost on the way); the parent cannot tell, so it waits for
 * the child it would have made: a child that runs reports as usual, and the parent's poll finds a
 * child that was never created. Found by the simulation (`npm run sim -- --delegation-seed 74`):
 * the parent used to record "could not be started" and go on while the child ran its side effects
 * for nobody.
 */
import { env } from 'cloudflare:workers'
import { afterEach, describe, expect, it } from 'vitest'
import { reply } from '../fakes/fake-openai'
import { CHILD_POLL_MS, childRunId } from '../../src/runs/child-runs'
import {
  api,
  AUTH,
  drainAlarms,
  getRun,
  getTrace,
  startRun,
  TestClock,
  useServiceFakes,
} from '../service/harness'

const fakes = useServiceFakes()
const RUNS = (env as unknown as { RUNS: DurableObjectNamespace }).RUNS
const realGet = RUNS.get.bind(RUNS)

/**
 * The Worker's RUNS binding, with the first `start` call to run `childId` failing as `how` says
 * (the binding object itself is patched: the test helpers need it to stay the same object).
 */
function failChildStart(childId: string, how: 'answer_lost' | 'lost_on_the_way'): void {
  let armed = true
  const child = RUNS.idFromName(childId).toString()
  RUNS.get = ((id: DurableObjectId, options?: DurableObjectNamespaceGetDurableObjectOptions) => {
    const stub = realGet(id, options)
    if (id.toString() !== child) return stub
    const rpc = stub as unknown as Record<string, (...a: unknown[]) => unknown>
    return new Proxy(stub, {
      get(s, method) {
        // Every property of an RPC stub is a remote method (`then` aside: not a promise).
        if (typeof method !== 'string' || method === 'then') return undefined
        const call = (...a: unknown[]) => rpc[method]!(...a)
        if (method !== 'start') return call
        return async (input: unknown) => {
          if (!armed) return call(input)
          armed = false
          if (how === 'answer_lost') await call(input)
          throw new Error('Network connection lost.')
        }
      },
    })
  }) as typeof RUNS.get
}

function restoreRuns(): void {
  delete (RUNS as { get?: unknown }).get
  if (RUNS.get === undefined) RUNS.get = realGet
}

afterEach(restoreRuns)

const ASK = { id: 'call_d', name: 'ask_default', arguments: { task: 'Add 2 and 2' } }

/** A lead run whose `ask_default` call's start fails as `how` says: it waits for one child. */
async function startWithLostStart(how: 'answer_lost' | 'lost_on_the_way') {
  fakes.ai.enqueue(reply.toolCalls([ASK]))
  const parent = await startRun({ agent: 'lead', task: 'Sum it' })
  failChildStart(await childRunId(parent, ASK.id), how)
  await drainAlarms(parent)
  const waiting = await getRun(parent)
  expect(waiting.phase).toBe('await_child')
  expect(waiting.children).toHaveLength(1)
  return { parent, child: waiting.children[0]!.runId }
}

describe('a child start call that fails', () => {
  it('its answer lost: the parent waits for the child that was created, and records its answer', async () => {
    const { parent, child } = await startWithLostStart('answer_lost')
    // The test helpers below need the child's real stub.
    restoreRuns()
    fakes.ai.enqueue(reply.text('4'))
    await drainAlarms(child)
    expect((await getRun(child)).status).toBe('succeeded')
    fakes.ai.enqueue(reply.text('It is 4.'))
    await drainAlarms(parent)
    const done = await getTrace(parent)
    expect(done).toMatchObject({ ok: true, stopReason: 'finish', answer: 'It is 4.' })
    expect(done.steps[0]!.calls[0]).toMatchObject({ kind: 'ok', observation: '4' })
    // One child for the call, ever; its model call is in the parent's usage.
    const list = await api(`/v1/runs?parent=${parent}`, { headers: AUTH })
    const { items } = (await list.json()) as { items: { id: string }[] }
    expect(items.map((i) => i.id)).toEqual([child])
    expect(done.usage.modelCalls).toBe(3)
  })

  it('lost on the way: the poll finds no child, the call is an error and the parent goes on', async () => {
    const clock = new TestClock()
    try {
      const { parent, child } = await startWithLostStart('lost_on_the_way')
      expect(await api(`/v1/runs/${child}`, { headers: AUTH })).toHaveProperty('status', 404)
      fakes.ai.enqueue(reply.text('The sum could not be delegated.'))
      clock.advance(CHILD_POLL_MS)
      await drainAlarms(parent)
      const done = await getTrace(parent)
      expect(done).toMatchObject({ ok: true, stopReason: 'finish' })
      const call = done.steps[0]!.calls[0]!
      expect(call.kind).toBe('tool_error')
      expect(call.observation).toContain(`child run ${child}`)
      expect(call.observation).toContain('does not exist')
    } finally {
      clock.restore()
    }
  })
})
