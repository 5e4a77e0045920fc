/**
 * An agent's policy as code through the Worker's fetch (docs/human-in-the-loop.md#policies-as-code),
 * with the test catalog's `careful` agent: its policy asks about a read-only calculator call
 * (which no confirm policy would), refuses a post to /forbidden, and leaves the rest to the
 * confirm policy (CONFIRM_POLICY=ask here): the stricter wins, and the trace says who said what.
 */
import { describe, expect, it } from 'vitest'
import { reply } from '../fakes/fake-openai'
import {
  drainAlarms,
  getRun,
  getTrace,
  postJson,
  RECEIVER,
  startRun,
  useServiceFakes,
} from '../service/harness'

const fakes = useServiceFakes()

describe("an agent's policy in a run", () => {
  it('asks about a read-only call; once approved it runs', async () => {
    fakes.ai.enqueue(
      reply.toolCalls([{ id: 'call_1', name: 'calculator', arguments: { expression: '6*7' } }]),
    )
    const id = await startRun({ task: 'What is 6*7?', agent: 'careful' })
    await drainAlarms(id)
    const pending = (await getRun(id)).pendingApprovals
    expect(pending).toMatchObject([{ kind: 'approval', tool: 'calculator', callId: 'call_1' }])
    fakes.ai.enqueue(reply.text('42'))
    const res = await postJson(`/v1/runs/${id}/approvals/call_1`, {
      decision: 'approve',
      args_hash: pending[0]!.argsHash,
    })
    expect(res.status).toBe(200)
    await drainAlarms(id)
    const trace = await getTrace(id)
    expect(trace).toMatchObject({ ok: true, answer: '42' })
    expect(trace.steps[0]!.calls[0]).toMatchObject({
      observation: expect.stringContaining('42'),
      policy: {
        configured: 'run',
        applied: 'ask',
        policy: null,
        agent: { verdict: 'ask', reason: 'every calculation is reviewed', error: null },
      },
    })
  })

  it('refuses a call before anyone is asked, naming its reason', async () => {
    const args = { url: `https://${RECEIVER}/forbidden`, body: { x: 1 } }
    fakes.ai.enqueue(
      reply.toolCalls([{ id: 'call_1', name: 'http_post', arguments: args }]),
      reply.text('I may not.'),
    )
    const id = await startRun({ task: 'Post it', agent: 'careful' })
    await drainAlarms(id)
    expect(fakes.receiver.hits).toEqual([])
    const call = (await getTrace(id)).steps[0]!.calls[0]!
    expect(call.observation).toContain(
      "http_post was not run: the agent's policy denied it (nothing goes to /forbidden)",
    )
    expect(call.policy).toMatchObject({ configured: 'ask', applied: 'deny' })
  })

  it('its allow never widens CONFIRM_POLICY: a post elsewhere still waits for a person', async () => {
    const args = { url: `https://${RECEIVER}/incidents/1`, body: { x: 1 } }
    fakes.ai.enqueue(reply.toolCalls([{ id: 'call_1', name: 'http_post', arguments: args }]))
    const id = await startRun({ task: 'Post it', agent: 'careful' })
    await drainAlarms(id)
    expect((await getRun(id)).pendingApprovals).toHaveLength(1)
    expect((await getTrace(id)).steps[0]!.calls[0]!.policy).toMatchObject({
      configured: 'ask',
      applied: 'ask',
      agent: { verdict: 'allow' },
    })
  })
})
