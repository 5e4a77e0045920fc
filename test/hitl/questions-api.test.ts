import { describe, expect, it } from 'vitest'
import { reply } from '../fakes/fake-openai'
import {
  api,
  AUTH,
  drainAlarms,
  getRun,
  getTrace,
  postJson,
  useServiceFakes,
} from '../service/harness'

/**
 * Questions an agent asks a person (ask_person), through the Worker's fetch: the run's view and
 * the inbox show the item and its actions, an answer checked against the question decides it,
 * and every bad answer is a clear error that leaves the item pending
 * (docs/human-in-the-loop.md#questions).
 */
const fakes = useServiceFakes()

const ASK = { question: 'Which region should I restart?', choices: ['eu-west', 'us-east'] }

async function asking(args: Record<string, unknown> = ASK) {
  fakes.ai.enqueue(
    reply.toolCalls([{ id: 'call_q', name: 'ask_person', arguments: args }], {
      content: 'I must not guess the region.',
    }),
  )
  const res = await postJson('/v1/runs', { task: 'Restart the cache', tools: ['ask_person'] })
  const { id } = (await res.json()) as { id: string }
  await drainAlarms(id)
  const view = await getRun(id)
  expect(view.status).toBe('awaiting_approval')
  return { id, item: view.pendingApprovals[0]! }
}

const answer = (id: string, body: unknown) => postJson(`/v1/runs/${id}/questions/call_q`, body)

describe('ask_person: a run waits on a question item', () => {
  it('the view and the inbox (both routes) show the question, its choices and actions', async () => {
    const { id, item } = await asking()
    expect(item).toMatchObject({
      callId: 'call_q',
      tool: 'ask_person',
      kind: 'question',
      ask: { message: ASK.question, choices: ASK.choices, schema: null },
      editSchema: null,
      actions: ['answer', 'decline'],
      href: `/v1/runs/${id}/questions/call_q`,
      reason: 'I must not guess the region.',
    })
    for (const path of ['/v1/approvals', '/v1/inbox']) {
      const res = await api(path, { headers: AUTH })
      expect(res.status).toBe(200)
      const { items } = (await res.json()) as { items: Record<string, unknown>[] }
      expect(items.find((i) => i.runId === id)).toMatchObject({
        kind: 'question',
        ask: { message: ASK.question },
        actions: ['answer', 'decline'],
        argsHash: item.argsHash,
      })
    }
  })

  it('answered with a choice: the answer is the observation, the decider is the token', async () => {
    const { id, item } = await asking()
    fakes.ai.enqueue(reply.text('Restarted eu-west.'))
    const res = await answer(id, { question_hash: item.argsHash, answer: 'eu-west' })
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({
      ok: true,
      kind: 'question',
      decision: 'approved',
      decidedBy: 'api',
    })
    await drainAlarms(id)
    const trace = await getTrace(id)
    expect(trace).toMatchObject({ ok: true, answer: 'Restarted eu-west.' })
    expect(trace.steps[0]!.calls[0]).toMatchObject({
      observation: 'api answered: eu-west',
      approval: { kind: 'question', answer: 'eu-west', decidedBy: 'api' },
    })
    const again = await answer(id, { question_hash: item.argsHash, answer: 'us-east' })
    expect(again.status).toBe(409)
    expect(await again.json()).toMatchObject({
      error: { code: 'already_decided', details: { decidedBy: 'api' } },
    })
  })

  it('an answer matching the schema of a structured question', async () => {
    const schema = {
      type: 'object',
      properties: { replicas: { type: 'integer', minimum: 1 } },
      required: ['replicas'],
    }
    const { id, item } = await asking({ question: 'How many replicas?', schema })
    const bad = await answer(id, { question_hash: item.argsHash, answer: { replicas: 0 } })
    expect(bad.status).toBe(400)
    const body = (await bad.json()) as { error: { code: string; details: { problems: string[] } } }
    expect(body.error.code).toBe('invalid_answer')
    expect(body.error.details.problems.join(' ')).toContain('answer.replicas')
    expect((await getRun(id)).pendingApprovals).toHaveLength(1)
    fakes.ai.enqueue(reply.text('Scaled.'))
    const ok = await answer(id, { question_hash: item.argsHash, answer: { replicas: 3 } })
    expect(ok.status).toBe(200)
    await drainAlarms(id)
    expect((await getTrace(id)).steps[0]!.calls[0]!.observation).toBe(
      'api answered: {"replicas":3}',
    )
  })

  it('declined: the model is told nobody answered and who declined', async () => {
    const { id, item } = await asking()
    fakes.ai.enqueue(reply.text('I will not restart anything.'))
    const res = await answer(id, { question_hash: item.argsHash, decline: true, reason: 'ask ops' })
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({ decision: 'denied', kind: 'question' })
    await drainAlarms(id)
    expect((await getTrace(id)).steps[0]!.calls[0]).toMatchObject({
      kind: 'denied',
      observation: expect.stringContaining('api declined to answer ("ask ops")'),
    })
  })

  it.each([
    ['a value not among the choices', { answer: 'ap-south' }, 400, 'invalid_answer'],
    ['no answer and no decline', {}, 400, 'invalid_request'],
    ['a stale hash', { answer: 'eu-west', question_hash: 'f'.repeat(64) }, 409, 'hash_mismatch'],
  ])('%s: refused, the question still pending', async (_l, body, status, code) => {
    const { id, item } = await asking()
    const res = await answer(id, { question_hash: item.argsHash, ...body })
    expect(res.status).toBe(status)
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe(code)
    expect((await getRun(id)).pendingApprovals[0]).toMatchObject({ callId: 'call_q' })
  })

  it('the approvals route refuses a question (wrong kind), the questions route an approval', async () => {
    const { id, item } = await asking()
    const res = await postJson(`/v1/runs/${id}/approvals/call_q`, {
      decision: 'approve',
      args_hash: item.argsHash,
    })
    expect(res.status).toBe(409)
    expect(await res.json()).toMatchObject({
      error: { code: 'wrong_kind', details: { kind: 'question' } },
    })
    expect((await getRun(id)).pendingApprovals).toHaveLength(1)
  })

  it('after it expired: 409 approval_expired, and the run goes on with the expiry as the observation', async () => {
    const { id, item } = await asking()
    fakes.clock.advance(24 * 3_600_000 + 1)
    const res = await answer(id, { question_hash: item.argsHash, answer: 'eu-west' })
    expect(res.status).toBe(409)
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('approval_expired')
    fakes.ai.enqueue(reply.text('Nobody answered.'))
    await drainAlarms(id)
    expect((await getTrace(id)).steps[0]!.calls[0]!.observation).toContain(
      'nobody answered before the question expired',
    )
  })
})
