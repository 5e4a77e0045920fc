/**
 * Delegation through the Worker's fetch (docs/agents.md#delegation): the `lead` agent's
 * `ask_triage` and `ask_default` calls start child runs of their own; the parent waits without
 * running, records the child's answer (the validated object for an agent with an output schema,
 * else its text) and adds the child's usage to its own.
 */
import { describe, expect, it } from 'vitest'
import { reply } from '../fakes/fake-openai'
import { api, AUTH, drainAlarms, getRun, getTrace, startRun, useServiceFakes } from '../service/harness'

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
    expect(childView.status, JSON.stringify(childView.result).slice(0, 3000)).toBe("succeeded")
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
