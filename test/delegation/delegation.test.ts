/**
 * Delegation through the Worker's fetch (docs/agents.md#delegation): the `lead` agent's
 * `ask_triage` and `ask_default` calls start child runs of their own; the parent waits without
 * running, records the child's answer (the validated object for an agent with an output schema,
 * else its text) and adds the child's usage to its own.
 */
import { describe, expect, it } from 'vitest'
import { reply } from '../fakes/fake-openai'
import {
  api,
  AUTH,
  decide,
  drainAlarms,
  getRun,
  getTrace,
  postJson,
  receiverPost,
  startRun,
  useServiceFakes,
} from '../service/harness'
import { readSse } from '../events/sse'

const fakes = useServiceFakes()

const TICKET = { severity: 'sev1', component: 'checkout', summary: 'Checkout fails for everyone.' }

describe('a lead delegating to a child run', () => {
  it('ask_triage: the child answers with its schema, the parent sees the object as JSON', async () => {
    fakes.ai.enqueue(
      reply.toolCalls([
        { id: 'call_t', name: 'ask_triage', arguments: { task: 'Checkout returns 500 for all' } },
      ]),
    )
    const parent = await startRun({ agent: 'lead', task: 'Checkout is down, triage it' })
    await drainAlarms(parent)
    const waiting = await getRun(parent)
    expect(waiting.phase).toBe('await_child')
    expect(waiting.status).toBe('running')
    expect(waiting.children).toHaveLength(1)
    const child = waiting.children[0]!
    expect(child).toMatchObject({ callId: 'call_t', agent: 'triage', status: 'running' })

    // The child is a run of its own: the triage agent, its own trace, its parent named.
    fakes.ai.enqueue(reply.toolCalls([{ name: 'final_answer', arguments: { answer: TICKET } }]))
    await drainAlarms(child.runId)
    const childView = await getRun(child.runId)
    expect(childView).toMatchObject({
      status: 'succeeded',
      agent: { name: 'triage' },
      parentRunId: parent,
      task: 'Checkout returns 500 for all',
    })
    expect(childView.result.output).toEqual(TICKET)

    fakes.ai.enqueue(reply.text('Sev1 in checkout; triaged.'))
    await drainAlarms(parent)
    const done = await getRun(parent)
    expect(done.status).toBe('succeeded')
    expect(done.result.answer).toBe('Sev1 in checkout; triaged.')
    const call = done.result.steps[0]!.calls[0]!
    expect(JSON.parse(call.observation)).toEqual(TICKET)
    expect(done.children).toEqual([
      { callId: 'call_t', runId: child.runId, agent: 'triage', status: 'succeeded' },
    ])
    // The child's usage is the parent's too: 2 own model calls + 1 of the child.
    expect(done.result.usage.modelCalls).toBe(3)
    expect(done.result.usage.promptTokens).toBe(30)
    const trace = await getTrace(parent)
    expect(trace.children).toEqual(done.children)
  })
})

/** Starts a `lead` run whose first reply delegates `task` to `agent`; returns both run ids. */
async function delegated(agent: string, task: string, body: Record<string, unknown> = {}) {
  fakes.ai.enqueue(reply.toolCalls([{ id: 'call_d', name: `ask_${agent}`, arguments: { task } }]))
  const parent = await startRun({ agent: 'lead', task: 'Handle it', ...body })
  await drainAlarms(parent)
  const view = await getRun(parent)
  expect(view.phase).toBe('await_child')
  return { parent, child: view.children[0]!.runId }
}

describe('a delegate with tools', () => {
  it('ask_default: its text answer is the observation; its approval shows in the parent and is decided on the child', async () => {
    const { parent, child } = await delegated('default', 'Post the status to the receiver')
    fakes.ai.enqueue(reply.toolCalls([receiverPost('/status', { up: false })]))
    await drainAlarms(child)
    const childView = await getRun(child)
    expect(childView.status).toBe('awaiting_approval')
    // The parent lists its descendant's approval, naming the run and the agent.
    const waiting = await getRun(parent)
    expect(waiting.pendingApprovals).toEqual([])
    expect(waiting.children[0]!.status).toBe('awaiting_approval')
    expect(waiting.descendantApprovals).toEqual([
      expect.objectContaining({
        runId: child,
        agent: 'default',
        callId: 'call_post',
        tool: 'http_post',
        argsHash: childView.pendingApprovals[0]!.argsHash,
      }),
    ])
    const approvals = await api(`/v1/runs/${parent}/approvals`, { headers: AUTH })
    expect(await approvals.json()).toMatchObject({
      descendantApprovals: [{ runId: child, callId: 'call_post' }],
    })
    const res = await decide(child, 'call_post', {
      decision: 'approve',
      args_hash: waiting.descendantApprovals[0]!.argsHash,
    })
    expect(res.status).toBe(200)
    fakes.ai.enqueue(reply.text('Posted the status.'))
    await drainAlarms(child)
    expect(fakes.receiver.hits).toHaveLength(1)
    fakes.ai.enqueue(reply.text('Done: the status is posted.'))
    await drainAlarms(parent)
    const done = await getRun(parent)
    expect(done.status).toBe('succeeded')
    expect(done.result.steps[0]!.calls[0]!.observation).toBe('Posted the status.')
    expect(done.descendantApprovals).toEqual([])
    expect(fakes.receiver.hits).toHaveLength(1)
  })

  it('the parent streams child_started and child_finished; GET /v1/runs?parent= lists the child', async () => {
    const { parent, child } = await delegated('default', 'Add 2 and 2')
    fakes.ai.enqueue(reply.text('4'))
    await drainAlarms(child)
    fakes.ai.enqueue(reply.text('It is 4.'))
    await drainAlarms(parent)
    const events = await readSse(await api(`/v1/runs/${parent}/events`, { headers: AUTH })).toEnd()
    const family = events.filter((e) => e.type.startsWith('child_'))
    expect(family.map((e) => [e.type, e.data])).toEqual([
      [
        'child_started',
        { step: 0, callId: 'call_d', tool: 'ask_default', runId: child, agent: 'default' },
      ],
      [
        'child_finished',
        {
          step: 0,
          callId: 'call_d',
          tool: 'ask_default',
          runId: child,
          agent: 'default',
          status: 'succeeded',
        },
      ],
    ])
    const list = await api(`/v1/runs?parent=${parent}`, { headers: AUTH })
    expect(list.status).toBe(200)
    const { items } = (await list.json()) as { items: { id: string; parentRunId?: string }[] }
    expect(items).toEqual([expect.objectContaining({ id: child, parentRunId: parent })])
    const bad = await api('/v1/runs?parent=nope', { headers: AUTH })
    expect(bad.status).toBe(400)
    expect(await bad.json()).toMatchObject({ error: { code: 'invalid_query' } })
  })
})

describe('budgets', () => {
  it('the child gets what the parent has left: a child that would overspend stops, and the parent is told', async () => {
    // The parent may take 2 steps; its first delegates, so the child may take 1.
    const { parent, child } = await delegated('default', 'Compute twice', {
      budget: { maxSteps: 2 },
    })
    fakes.ai.enqueue(
      reply.toolCalls([{ id: 'call_c', name: 'calculator', arguments: { expression: '2+2' } }]),
    )
    await drainAlarms(child)
    const childView = await getRun(child)
    expect(childView.result).toMatchObject({ ok: false, stopReason: 'max_steps' })
    expect(childView.stepCount).toBe(1)
    fakes.ai.enqueue(reply.text('The helper ran out of steps.'))
    await drainAlarms(parent)
    const done = await getRun(parent)
    const observation = done.result.steps[0]!.calls[0]!.observation
    expect(observation).toMatch(
      /^\[ToolError\] ask_default: child run run_[0-9a-f]{32} \(agent default\) failed with stopReason max_steps/,
    )
    expect(observation).toContain(child)
    expect(done.children[0]!.status).toBe('failed')
    // Usage summed: the parent's 2 model calls and the child's 1, 10 prompt tokens each.
    expect(done.result.usage).toMatchObject({
      modelCalls: 3,
      promptTokens: 30,
      completionTokens: 15,
    })
  })

  it('a parent with no steps left to give refuses the call without starting a child', async () => {
    fakes.ai.enqueue(
      reply.toolCalls([{ id: 'call_d', name: 'ask_default', arguments: { task: 'x' } }]),
      reply.text('unused'),
    )
    const parent = await startRun({ agent: 'lead', task: 'Go', budget: { maxSteps: 1 } })
    await drainAlarms(parent)
    const done = await getRun(parent)
    expect(done.children).toEqual([])
    expect(done.result.steps[0]!.calls[0]!.observation).toBe(
      '[ToolError] ask_default: the run has no steps left to give a child run',
    )
    expect(done.result.stopReason).toBe('max_steps')
    fakes.ai.takeViolations()
  })
})

describe('cancel', () => {
  it('cancelling the parent cancels the child it waits for', async () => {
    const { parent, child } = await delegated('default', 'Post it')
    fakes.ai.enqueue(reply.toolCalls([receiverPost()]))
    await drainAlarms(child)
    expect((await getRun(child)).status).toBe('awaiting_approval')
    const res = await postJson(`/v1/runs/${parent}/cancel`, { reason: 'wrong incident' })
    expect(res.status).toBe(202)
    await drainAlarms(parent)
    const cancelled = await getRun(parent)
    expect(cancelled.result.stopReason).toBe('cancelled')
    expect(cancelled.result.steps[0]!.calls[0]!.observation).toContain(`child run ${child} with it`)
    await drainAlarms(child)
    const childView = await getRun(child)
    expect(childView.result).toMatchObject({ stopReason: 'cancelled' })
    expect(childView.result.error).toContain(`parent run ${parent} ended (cancelled)`)
    expect(fakes.receiver.hits).toHaveLength(0)
  })

  it('deleting the parent cancels the child it waits for (the wipe keeps that delivery)', async () => {
    const { parent, child } = await delegated('default', 'Post it')
    fakes.ai.enqueue(reply.toolCalls([receiverPost()]))
    await drainAlarms(child)
    expect((await getRun(child)).status).toBe('awaiting_approval')
    const res = await api(`/v1/runs/${parent}`, { method: 'DELETE', headers: AUTH })
    expect(res.status).toBe(200)
    await drainAlarms(parent)
    expect((await api(`/v1/runs/${parent}`, { headers: AUTH })).status).toBe(404)
    await drainAlarms(child)
    const childView = await getRun(child)
    expect(childView.result).toMatchObject({ ok: false, stopReason: 'cancelled' })
    expect(childView.result.error).toContain(`parent run ${parent} was deleted`)
    expect(childView.pendingApprovals).toEqual([])
    expect(fakes.receiver.hits).toHaveLength(0)
  })
})

describe('ownership', () => {
  it("a token limited to its own runs reaches its run's child; another such token does not", async () => {
    const ALPHA = { authorization: 'Bearer test-alpha-token' }
    const BETA = { authorization: 'Bearer test-beta-token' }
    fakes.ai.enqueue(
      reply.toolCalls([{ id: 'call_d', name: 'ask_default', arguments: { task: 'Add 1 and 1' } }]),
    )
    const res = await api('/v1/runs', {
      method: 'POST',
      headers: { ...ALPHA, 'content-type': 'application/json' },
      body: JSON.stringify({ agent: 'lead', task: 'Sum it' }),
    })
    expect(res.status).toBe(202)
    const { id: parent } = (await res.json()) as { id: string }
    await drainAlarms(parent)
    const child = (await getRun(parent)).children[0]!.runId
    // The child inherits its parent's owner.
    expect((await api(`/v1/runs/${child}`, { headers: ALPHA })).status).toBe(200)
    expect((await api(`/v1/runs/${child}`, { headers: BETA })).status).toBe(404)
    fakes.ai.enqueue(reply.text('2'))
    await drainAlarms(child)
    const list = await api(`/v1/runs?parent=${parent}`, { headers: ALPHA })
    const { items } = (await list.json()) as { items: { id: string }[] }
    expect(items.map((i) => i.id)).toEqual([child])
    const other = await api(`/v1/runs?parent=${parent}`, { headers: BETA })
    expect(((await other.json()) as { items: unknown[] }).items).toEqual([])
    fakes.ai.enqueue(reply.text('It is 2.'))
    await drainAlarms(parent)
    expect((await api(`/v1/runs/${parent}`, { headers: ALPHA })).status).toBe(200)
  })
})
