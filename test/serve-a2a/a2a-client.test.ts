/**
 * Our agents over A2A v1.0, called with @a2a-js/sdk's client through the Worker's fetch
 * (docs/serving.md#a2a): the card lists the agents as skills; a message starts a run of the
 * skill it names and the task follows the run (completed with the answer, a structured answer
 * as a data part; input-required while a person decides; canceled); streams, reads and
 * cancels go through the same runs; another token's task does not exist for a token.
 */
import { TaskState, type StreamResponse, type Task } from '@a2a-js/sdk'
import { describe, expect, it } from 'vitest'
import { decide, drainAlarms, getRun, ORIGIN, RECEIVER, useServiceFakes } from '../service/harness'
import {
  ALPHA,
  BETA,
  clientAs,
  runIdOf,
  sendRequest,
  userMessage,
  whileRunning,
} from './a2a-harness'

const fakes = useServiceFakes({ openai: false })

const POST = `call http_post with {"url": "https://${RECEIVER}/tickets", "body": {"title": "p99"}}`

const asTask = (result: unknown): Task => {
  expect(result).toHaveProperty('status')
  return result as Task
}
const textOf = (task: Task) =>
  task.artifacts
    .flatMap((a) => a.parts)
    .flatMap((p) => (p.content?.$case === 'text' ? [p.content.value] : []))
const dataOf = (task: Task) =>
  task.artifacts
    .flatMap((a) => a.parts)
    .flatMap((p) => (p.content?.$case === 'data' ? [p.content.value] : []))

describe('A2A with @a2a-js/sdk', () => {
  it('the client reads the agent card: every agent is a skill, JSON-RPC at /a2a', async () => {
    const client = await clientAs(ALPHA.token)
    const card = await client.getAgentCard()
    expect(card.supportedInterfaces).toEqual([
      expect.objectContaining({
        url: `${ORIGIN}/a2a`,
        protocolBinding: 'JSONRPC',
        protocolVersion: '1.0',
      }),
    ])
    expect(card.capabilities?.streaming).toBe(true)
    const skills = Object.fromEntries(card.skills.map((s) => [s.id, s]))
    expect(Object.keys(skills)).toEqual(expect.arrayContaining(['default', 'triage']))
    expect(skills.triage!.outputModes).toContain('application/json')
    expect(skills.triage!.description).toMatch(/triage/i)
  })

  it('a message starts a run of its skill; the blocking send answers with the completed task', async () => {
    const client = await clientAs(ALPHA.token)
    const message = userMessage(
      'call calculator with {"expression": "6 * 7"}, then finish with It is 42.',
    )
    const id = await runIdOf(ALPHA, message)
    const task = asTask(await whileRunning(id, client.sendMessage(sendRequest(message))))
    expect(task.id).toBe(id)
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED)
    expect(textOf(task)).toEqual(['It is 42.'])
    expect(task.contextId).toBe(id)
    // The run is an ordinary run of the caller's token.
    const view = await getRun(id)
    expect(view).toMatchObject({
      status: 'succeeded',
      requestedBy: 'alpha',
      agent: { name: 'default' },
    })
  })

  it('a skill with an output schema completes with the structured answer as a data part', async () => {
    const client = await clientAs(ALPHA.token)
    const output = { severity: 'sev2', component: 'checkout', summary: 'Payments time out.' }
    const message = userMessage(`finish with ${JSON.stringify(output)}`, {
      metadata: { skill: 'triage' },
    })
    const id = await runIdOf(ALPHA, message)
    const task = asTask(await whileRunning(id, client.sendMessage(sendRequest(message))))
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED)
    expect(dataOf(task)).toEqual([output])
    expect((await getRun(id)).agent.name).toBe('triage')
  })

  it('the same message sent again finds its task and starts nothing more', async () => {
    const client = await clientAs(ALPHA.token)
    const message = userMessage('finish with Once.')
    const id = await runIdOf(ALPHA, message)
    const first = asTask(
      await client.sendMessage(sendRequest(message, { returnImmediately: true })),
    )
    const again = asTask(
      await client.sendMessage(sendRequest(message, { returnImmediately: true })),
    )
    expect(first.id).toBe(id)
    expect(again.id).toBe(id)
  })

  it('streams the task: submitted as working, input-required at the approval; then completed after the API decides', async () => {
    const client = await clientAs(ALPHA.token)
    const message = userMessage(`${POST}\nthen finish with Filed.`)
    const id = await runIdOf(ALPHA, message)
    const events: StreamResponse[] = []
    await whileRunning(
      id,
      (async () => {
        for await (const event of client.sendMessageStream(sendRequest(message))) events.push(event)
      })(),
    )
    expect(events.map((e) => e.payload?.$case)).toEqual(['task', 'statusUpdate'])
    const first = events[0]!.payload!.value as Task
    expect(first).toMatchObject({ id, status: { state: TaskState.TASK_STATE_WORKING } })
    const waiting = events[1]!.payload!
    expect(waiting.$case === 'statusUpdate' && waiting.value.status?.state).toBe(
      TaskState.TASK_STATE_INPUT_REQUIRED,
    )
    expect(fakes.receiver.hits).toHaveLength(0)

    // tasks/get shows what the run waits for, and where a person decides it.
    const pending = asTask(await client.getTask({ tenant: '', id, historyLength: undefined }))
    expect(pending.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED)
    const parts = pending.status?.message?.parts ?? []
    expect(parts[0]?.content).toMatchObject({
      $case: 'text',
      value: expect.stringContaining('approval of http_post'),
    })
    expect(parts[1]?.content).toMatchObject({
      $case: 'data',
      value: { pending: [expect.objectContaining({ kind: 'approval', tool: 'http_post' })] },
    })

    // A person approves through the API; the task completes with the answer.
    const item = (await getRun(id)).pendingApprovals[0]!
    expect(
      (await decide(id, item.callId, { decision: 'approve', args_hash: item.argsHash })).status,
    ).toBe(200)
    await drainAlarms(id)
    const done = asTask(await client.getTask({ tenant: '', id, historyLength: undefined }))
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED)
    expect(textOf(done)).toEqual(['Filed.'])
    expect(fakes.receiver.hits).toHaveLength(1)
  })

  it('resubscribes to a waiting task and follows it through the approval to its end', async () => {
    const client = await clientAs(ALPHA.token)
    const message = userMessage(`${POST}\nthen finish with Filed again.`)
    const id = await runIdOf(ALPHA, message)
    await whileRunning(id, client.sendMessage(sendRequest(message)))
    const item = (await getRun(id)).pendingApprovals[0]!
    const stream = client.resubscribeTask({ tenant: '', id })
    const first = (await stream.next()).value!.payload!
    expect(first.$case === 'task' && first.value.status?.state).toBe(
      TaskState.TASK_STATE_INPUT_REQUIRED,
    )
    await decide(id, item.callId, { decision: 'approve', args_hash: item.argsHash })
    const events: StreamResponse[] = []
    await whileRunning(
      id,
      (async () => {
        for await (const e of stream) events.push(e)
      })(),
    )
    const states = events.map((e) =>
      e.payload?.$case === 'statusUpdate' ? e.payload.value.status?.state : e.payload?.$case,
    )
    // Whether it is read while working after the decision depends on timing; the end does not.
    expect(states.slice(-2)).toEqual(['artifactUpdate', TaskState.TASK_STATE_COMPLETED])
    expect(states.slice(0, -2).every((s) => s === TaskState.TASK_STATE_WORKING)).toBe(true)
  })

  it('cancels a task: the run is cancelled, the task canceled; cancelling again is refused', async () => {
    const client = await clientAs(ALPHA.token)
    const message = userMessage(`${POST}\nthen finish with Never.`)
    const id = await runIdOf(ALPHA, message)
    await whileRunning(id, client.sendMessage(sendRequest(message)))
    const cancelled = await whileRunning(
      id,
      client.cancelTask({ tenant: '', id, metadata: undefined }),
    )
    expect(cancelled.status?.state).toBe(TaskState.TASK_STATE_CANCELED)
    expect(await getRun(id)).toMatchObject({
      status: 'failed',
      result: { stopReason: 'cancelled' },
    })
    expect(fakes.receiver.hits).toHaveLength(0)
    await expect(client.cancelTask({ tenant: '', id, metadata: undefined })).rejects.toMatchObject({
      name: 'TaskNotCancelableError',
    })
  })

  it("another token's task is not found, exactly as a task that does not exist", async () => {
    const alpha = await clientAs(ALPHA.token)
    const beta = await clientAs(BETA.token)
    const message = userMessage('finish with Mine.')
    const id = await runIdOf(ALPHA, message)
    await whileRunning(id, alpha.sendMessage(sendRequest(message)))
    const missing = 'run_' + '0'.repeat(32)
    for (const taskId of [id, missing]) {
      await expect(
        beta.getTask({ tenant: '', id: taskId, historyLength: undefined }),
      ).rejects.toMatchObject({
        name: 'TaskNotFoundError',
        message: `no task ${taskId}`,
      })
      await expect(
        beta.cancelTask({ tenant: '', id: taskId, metadata: undefined }),
      ).rejects.toMatchObject({
        name: 'TaskNotFoundError',
      })
    }
    expect((await getRun(id)).status).toBe('succeeded')
  })
})
