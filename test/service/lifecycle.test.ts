import { framed } from '../fakes/scripted-model'
import { describe, expect, it } from 'vitest'
import { reply } from '../fakes/fake-openai'
import {
  api,
  AUTH,
  decide,
  drainAlarms,
  getRun,
  getTrace,
  runAlarm,
  RECEIVER,
  startRun,
  useServiceFakes,
} from './harness'

const fakes = useServiceFakes()

const postCall = (body: Record<string, unknown> = { service: 'order' }) => ({
  id: 'call_post',
  name: 'http_post',
  arguments: { url: `https://${RECEIVER}/deploys`, body },
})

describe('a run from POST /v1/runs to its trace', () => {
  it('answers 202 at once, then advances only in alarms', async () => {
    fakes.ai.enqueue(
      reply.toolCalls(
        [{ id: 'call_calc', name: 'calculator', arguments: { expression: '6 * 7' } }],
        {
          content: 'Compute it.',
          usage: { prompt_tokens: 100, completion_tokens: 10 },
        },
      ),
      reply.text('The answer is 42.', { usage: { prompt_tokens: 150, completion_tokens: 8 } }),
    )
    const res = await api('/v1/runs', {
      method: 'POST',
      headers: { ...AUTH, 'content-type': 'application/json' },
      body: JSON.stringify({ task: 'What is 6 * 7?', tools: ['calculator'] }),
    })
    expect(res.status).toBe(202)
    const created = (await res.json()) as { id: string; status: string; links: object }
    expect(created).toMatchObject({ status: 'running', created: true })
    expect(created.id).toMatch(/^run_[0-9a-f]{32}$/)
    const self = `/v1/runs/${created.id}`
    expect(created.links).toEqual({
      self,
      trace: `${self}/trace`,
      cancel: `${self}/cancel`,
      approvals: `${self}/approvals`,
    })
    // The request did not wait on the model.
    expect(fakes.ai.bodies).toHaveLength(0)
    expect((await getRun(created.id)).stepCount).toBe(0)

    expect(await drainAlarms(created.id)).toBeGreaterThan(0)

    const view = await getRun(created.id)
    expect(view).toMatchObject({ status: 'succeeded', phase: 'done', stepCount: 2 })
    expect(view.result.usage).toMatchObject({
      promptTokens: 250,
      completionTokens: 18,
      modelCalls: 2,
    })
    const result = await getTrace(created.id)
    expect(result).toMatchObject({ ok: true, answer: 'The answer is 42.', stopReason: 'finish' })
    expect(result.steps[0]!.calls[0]).toMatchObject({
      name: 'calculator',
      args: { expression: '6 * 7' },
      kind: 'ok',
    })
    expect(result.steps[0]!.calls[0]!.observation).toContain('42')
    // What the model was sent: the task, then the call and its paired observation.
    expect(fakes.ai.bodies).toHaveLength(2)
    expect(fakes.ai.bodies[0]!.model).toBe('gpt-test')
    expect(fakes.ai.bodies[0]!.tools!.map((t) => t.function.name)).toContain('calculator')
    expect(JSON.stringify(fakes.ai.bodies[0]!.messages)).toContain('What is 6 * 7?')
    const last = fakes.ai.bodies[1]!.messages.at(-1)!
    expect(last).toMatchObject({ role: 'tool', tool_call_id: 'call_calc' })
    expect(last.content).toContain('42')
    expect(fakes.ai.violations).toEqual([])
  })
})

describe('a run with an approval (http_post under ask)', () => {
  async function awaitingRun() {
    fakes.ai.enqueue(reply.toolCalls([postCall()], { content: 'Record the deploy.' }))
    const id = await startRun({ task: 'Record the deploy', tools: ['http_post'] })
    await drainAlarms(id)
    const view = await getRun(id)
    expect(view.status).toBe('awaiting_approval')
    expect(view.pendingApprovals).toHaveLength(1)
    const pending = view.pendingApprovals[0]!
    expect(pending).toMatchObject({
      callId: 'call_post',
      tool: 'http_post',
      args: { url: `https://${RECEIVER}/deploys`, body: { service: 'order' } },
      reason: 'Record the deploy.',
      requestedBy: 'api',
    })
    expect(pending.argsHash).toMatch(/^[0-9a-f]{64}$/)
    expect(fakes.receiver.hits).toHaveLength(0)
    return { id, hash: pending.argsHash }
  }

  it('approved: runs exactly once, keyed by run and call id (Idempotency-Key)', async () => {
    const { id, hash } = await awaitingRun()
    fakes.ai.enqueue(reply.text('Recorded.'))
    const res = await decide(id, 'call_post', { decision: 'approve', args_hash: hash })
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({
      ok: true,
      decision: 'approved',
      decidedBy: 'api',
    })
    await drainAlarms(id)
    expect(fakes.receiver.hits).toHaveLength(1)
    // Unique per run and call: a retry of this call reuses it, nothing else does.
    expect(fakes.receiver.hits[0]!.key).toBe(`${id}:call_post`)
    expect(JSON.parse(fakes.receiver.hits[0]!.body)).toEqual({ service: 'order' })
    const result = await getTrace(id)
    expect(result).toMatchObject({ ok: true, answer: 'Recorded.', stopReason: 'finish' })
    expect(result.steps[0]!.calls[0]).toMatchObject({
      status: 'done',
      kind: 'ok',
      approval: { decision: 'approved', decidedBy: 'api' },
    })
    expect(result.steps[0]!.calls[0]!.observation).toContain('HTTP 200')
  })

  it('a decision sent again after a lost answer is answered with the one recorded; it runs once', async () => {
    const { id, hash } = await awaitingRun()
    fakes.ai.enqueue(reply.text('Recorded.'))
    const first = await decide(id, 'call_post', { decision: 'approve', args_hash: hash })
    expect(first.status).toBe(200)
    await drainAlarms(id)
    // The client never saw the first answer and sends the same decision again.
    const again = await decide(id, 'call_post', { decision: 'approve', args_hash: hash })
    expect(again.status).toBe(200)
    expect(await again.json()).toEqual({
      ok: true,
      call: { id: 'call_post', name: 'http_post', status: 'done' },
      decidedBy: 'api',
      decision: 'approved',
      replayed: true,
    })
    // Another decision is still refused, naming who decided.
    const other = await decide(id, 'call_post', { decision: 'deny', args_hash: hash })
    expect(other.status).toBe(409)
    expect(await other.json()).toMatchObject({
      error: { code: 'already_decided', details: { decidedBy: 'api', decision: 'approved' } },
    })
    await drainAlarms(id)
    expect(fakes.receiver.hits).toHaveLength(1)
  })

  it('denied: never runs, and the model reads why', async () => {
    const { id, hash } = await awaitingRun()
    fakes.ai.enqueue(reply.text('I did not record it.'))
    const res = await decide(id, 'call_post', {
      decision: 'deny',
      args_hash: hash,
      reason: 'not now',
    })
    expect(res.status).toBe(200)
    await drainAlarms(id)
    expect(fakes.receiver.hits).toHaveLength(0)
    const call = (await getTrace(id)).steps[0]!.calls[0]!
    expect(call.kind).toBe('denied')
    expect(call.observation).toMatch(/^\[ToolError\] http_post was not run: it was denied by api\b/)
    expect(fakes.ai.lastBody().messages.at(-1)!.content).toBe(framed('http_post', call.observation))
  })

  it('expired: the alarm at the expiry denies it with reason expired', async () => {
    fakes.ai.enqueue(reply.toolCalls([postCall()], { content: 'Record the deploy.' }))
    const id = await startRun({
      task: 'Record the deploy',
      tools: ['http_post'],
      budget: { approvalTtlSeconds: 60 },
    })
    await drainAlarms(id)
    const pending = (await getRun(id)).pendingApprovals[0]!
    expect(Date.parse(pending.expiresAt) - fakes.clock.now()).toBe(60_000)
    // An early alarm (a retry) changes nothing.
    expect(await runAlarm(id)).toBe(true)
    expect((await getRun(id)).status).toBe('awaiting_approval')

    fakes.clock.advance(60_000)
    fakes.ai.enqueue(reply.text('Nobody approved it.'))
    expect(await runAlarm(id)).toBe(true)
    expect(fakes.receiver.hits).toHaveLength(0)
    const result = await getTrace(id)
    expect(result.stopReason).toBe('finish')
    const call = result.steps[0]!.calls[0]!
    expect(call.approval).toMatchObject({
      decision: 'denied',
      decidedBy: 'system',
      reason: 'expired',
    })
    expect(call.observation).toContain('the approval request expired with no decision')
    // A late decision is told the approval expired, and when; nothing runs.
    const late = await decide(id, 'call_post', { decision: 'approve', args_hash: pending.argsHash })
    expect(late.status).toBe(409)
    expect(await late.json()).toMatchObject({
      error: {
        code: 'approval_expired',
        message: expect.stringContaining(`expired at ${pending.expiresAt}`),
        details: { expiredAt: pending.expiresAt },
      },
    })
    expect(fakes.receiver.hits).toHaveLength(0)
  })

  it('does not charge the time waiting for a person to maxSeconds', async () => {
    const { id, hash } = await awaitingRun()
    fakes.clock.advance(2 * 3600_000) // two hours, far beyond the 300 s budget
    fakes.ai.enqueue(reply.text('Recorded.'))
    await decide(id, 'call_post', { decision: 'approve', args_hash: hash })
    await drainAlarms(id)
    const result = await getTrace(id)
    expect(result).toMatchObject({ ok: true, stopReason: 'finish' })
    expect(result.usage.activeMs).toBeLessThan(300_000)
  })
})

describe('per-run settings', () => {
  it.each<[string, RegExp]>([
    ['dry_run', /^\[DryRun\]/],
    ['deny', /^\[ToolError\]/],
  ])('confirm narrowed to %s: http_post never reaches the receiver', async (mode, observation) => {
    fakes.ai.enqueue(reply.toolCalls([postCall()]), reply.text('Nothing was posted.'))
    const id = await startRun({ task: 'Post', tools: ['http_post'], confirm: { mode } })
    await drainAlarms(id)
    const result = await getTrace(id)
    expect(result).toMatchObject({ ok: true, stopReason: 'finish' })
    expect(result.steps[0]!.calls[0]!.observation).toMatch(observation)
    expect(fakes.receiver.hits).toHaveLength(0)
  })

  it('a model from the allowlist is the one asked', async () => {
    fakes.ai.enqueue(reply.text('Hi.'))
    const id = await startRun({ task: 'Greet', tools: ['calculator'], model: 'gpt-test-large' })
    await drainAlarms(id)
    expect(fakes.ai.lastBody().model).toBe('gpt-test-large')
    expect((await getTrace(id)).model).toBe('gpt-test-large')
  })

  it('metadata comes back on the run', async () => {
    const id = await startRun({ task: 'Greet', metadata: { ticket: 'OPS-1', n: 2 } })
    expect((await getRun(id)).metadata).toEqual({ ticket: 'OPS-1', n: 2 })
  })
})
