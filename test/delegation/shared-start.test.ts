/**
 * A delegated child and an API start begin in the same place (src/runs/start/): the agent an
 * API request names and the agent a delegated call asks for become the same run (tools, policy,
 * protocol, model, instructions, output schema), and a deleted run's id refuses both. The child has
 * only what is its own: its budget carved out of its parent's, its parent, its owner.
 */
import { env } from 'cloudflare:workers'
import { describe, expect, it } from 'vitest'
import { DEFAULT_BUDGET } from '../../src/kernel/budget'
import { childRunId } from '../../src/runs/child-runs'
import { runStub } from '../../src/runs/types'
import { reply } from '../fakes/fake-openai'
import {
  api,
  AUTH,
  drainAlarms,
  getRun,
  getTrace,
  postJson,
  startRun,
  useServiceFakes,
} from '../service/harness'

const fakes = useServiceFakes()

interface Exported {
  state: {
    tools: string[]
    policy: unknown
    protocol: string
    model: string | null
    agent: unknown
    budget: { maxSteps: number }
    parent: unknown
  }
}

async function exported(id: string): Promise<Exported['state']> {
  const res = await api(`/v1/runs/${id}/export`, { headers: AUTH })
  expect(res.status).toBe(200)
  return ((await res.json()) as Exported).state
}

/** A `lead` run whose first reply asks `agent` to do `task`; returns both run ids. */
async function delegated(agent: string, task: string): Promise<{ parent: string; child: string }> {
  fakes.ai.enqueue(reply.toolCalls([{ id: 'call_d', name: `ask_${agent}`, arguments: { task } }]))
  const parent = await startRun({ agent: 'lead', task: 'Handle it' })
  await drainAlarms(parent)
  const view = await getRun(parent)
  expect(view.phase).toBe('await_child')
  return { parent, child: view.children[0]!.runId }
}

describe('one start for an API request and a delegated call', () => {
  it.each(['triage', 'default'])(
    'agent %s: the same run either way; the child differs only in what is its own',
    async (agent) => {
      const direct = await exported(await startRun({ agent, task: 'Checkout is down' }))
      const { parent, child } = await delegated(agent, 'Checkout is down')
      const asked = await exported(child)
      const shared = (s: Awaited<ReturnType<typeof exported>>) => ({
        tools: s.tools,
        policy: s.policy,
        protocol: s.protocol,
        model: s.model,
        agent: s.agent,
      })
      expect(shared(asked)).toEqual(shared(direct))
      expect(direct.parent).toBeNull()
      expect(asked.parent).toEqual({ runId: parent, callId: 'call_d', agent: 'lead', depth: 1 })
      // Carved out of the parent's budget: never more than the agent's own.
      expect(asked.budget.maxSteps).toBeLessThanOrEqual(direct.budget.maxSteps)
    },
  )
})

describe("one refusal for both: a deleted run's id is never used again", () => {
  it('an API start with the key of a deleted run is a 409 run_deleted', async () => {
    const key = { 'Idempotency-Key': 'shared-start-deleted' }
    const first = await postJson('/v1/runs', { task: 'Add 2 and 2' }, key)
    const { id } = (await first.json()) as { id: string }
    fakes.ai.enqueue(reply.text('4'))
    await drainAlarms(id)
    expect((await api(`/v1/runs/${id}`, { method: 'DELETE', headers: AUTH })).status).toBe(200)
    const again = await postJson('/v1/runs', { task: 'Add 2 and 2' }, key)
    expect(again.status).toBe(409)
    expect(await again.json()).toMatchObject({
      error: { code: 'run_deleted', details: { runId: id } },
    })
  })

  it('a delegated call whose child id names a deleted run is refused, and the parent goes on', async () => {
    const parent = await startRun({ agent: 'lead', task: 'Handle it' })
    // The child's id is its parent's and call's: a run of that id, finished and deleted first.
    const childId = await childRunId(parent, 'call_d')
    await runStub(env.RUNS, childId).start({
      id: childId,
      task: 'Earlier',
      tools: [],
      budget: DEFAULT_BUDGET,
      protocol: 'auto',
      policy: { mode: 'ask' },
      requestedBy: 'api',
      owner: null,
    })
    fakes.ai.enqueue(reply.text('Earlier answer.'))
    await drainAlarms(childId)
    expect((await api(`/v1/runs/${childId}`, { method: 'DELETE', headers: AUTH })).status).toBe(200)
    fakes.ai.enqueue(
      reply.toolCalls([{ id: 'call_d', name: 'ask_default', arguments: { task: 'Add 2 and 2' } }]),
    )
    fakes.ai.enqueue(reply.text('The child could not start.'))
    await drainAlarms(parent)
    const trace = await getTrace(parent)
    expect(trace.ok).toBe(true)
    expect(trace.steps[0]!.calls[0]!.observation).toContain(`child run ${childId} was deleted`)
    expect((await api(`/v1/runs/${childId}`, { headers: AUTH })).status).toBe(404)
  })
})
