/** Small edges of the HTTP surface, through the Worker's fetch. */
import { describe, expect, it } from 'vitest'
import { reply } from '../fakes/fake-openai'
import {
  api,
  AUTH,
  decide,
  drainAlarms,
  getRun,
  getTrace,
  logLines,
  postJson,
  RECEIVER,
  receiverPost,
  startRun,
  useServiceFakes,
} from './harness'
import { fetchWith } from './worker-with'

const fakes = useServiceFakes()

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/

describe('a client that disconnects mid-body', () => {
  it('gets a 400 client_disconnected and a client_disconnected log line, not a 500', async () => {
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"task":"half a bo'))
      },
      pull(controller) {
        controller.error(new Error('connection reset by peer'))
      },
    })
    const res = await fetchWith({}, '/v1/runs', {
      method: 'POST',
      headers: { ...AUTH, 'content-type': 'application/json' },
      body,
      // @ts-expect-error -- workerd needs no duplex for a streamed body; other runtimes do
      duplex: 'half',
    })
    expect(res.status).toBe(400)
    expect(await res.json()).toMatchObject({ error: { code: 'client_disconnected' } })
    const lines = logLines(fakes.logs)
    expect(lines).toContainEqual(
      expect.objectContaining({ msg: 'client_disconnected', method: 'POST', path: '/v1/runs' }),
    )
    expect(lines.map((l) => l.msg)).not.toContain('unhandled_error')
  })
})

describe('a wrong method', () => {
  it.each([
    ['DELETE', '/healthz', ['GET', 'HEAD']],
    ['PUT', '/v1/runs', ['POST']],
    ['PUT', `/v1/runs/run_${'0'.repeat(32)}`, ['GET', 'HEAD', 'DELETE']],
    ['GET', `/v1/runs/run_${'0'.repeat(32)}/cancel`, ['POST']],
    ['POST', '/openapi.json', ['GET', 'HEAD']],
  ])('%s %s → 405 with Allow', async (method, path, allowed) => {
    const res = await api(path, { method, headers: AUTH })
    expect(res.status).toBe(405)
    const allow = res.headers.get('Allow')!.split(', ')
    expect(allow).toEqual(expect.arrayContaining(allowed))
    expect(allow).not.toContain(method)
    expect(await res.json()).toMatchObject({ error: { code: 'method_not_allowed' } })
  })
})

describe('the calculator', () => {
  it.each(['constructor', '__proto__', 'toString(1)', 'hasOwnProperty(1)', 'valueOf'])(
    'refuses %s, which is not one of its names',
    async (expression) => {
      fakes.ai.enqueue(
        reply.toolCalls([{ id: 'call_c', name: 'calculator', arguments: { expression } }]),
        reply.text('Could not compute.'),
      )
      const id = await startRun({ task: 'Compute', tools: ['calculator'] })
      await drainAlarms(id)
      const call = (await getTrace(id)).steps[0]!.calls[0]!
      expect(call.kind).toBe('tool_error')
      expect(call.observation).toMatch(
        /unknown name "(constructor|__proto__|toString|hasOwnProperty|valueOf)"/,
      )
    },
  )
})

describe('what the start response and the run show', () => {
  it('links.approvals is a route that answers with the pending approvals', async () => {
    fakes.ai.enqueue(reply.toolCalls([receiverPost()]))
    const res = await postJson('/v1/runs', { task: 'Post', tools: ['http_post'] })
    const { id, links } = (await res.json()) as { id: string; links: Record<string, string> }
    await drainAlarms(id)
    const approvals = await api(links.approvals!, { headers: AUTH })
    expect(approvals.status).toBe(200)
    expect(await approvals.json()).toMatchObject({
      runId: id,
      status: 'awaiting_approval',
      pendingApprovals: [{ callId: 'call_post', tool: 'http_post' }],
    })
    for (const link of Object.values(links)) {
      const method = link.endsWith('/cancel') ? 'POST' : 'GET'
      expect([200, 202], link).toContain(
        (await api(link, { method, headers: { ...AUTH, 'content-type': 'application/json' } }))
          .status,
      )
    }
  })

  it('one spelling (argsHash) and ISO 8601 timestamps in the view, the trace and deliveries', async () => {
    fakes.ai.enqueue(reply.toolCalls([receiverPost()]), reply.text('Posted.'))
    const id = await startRun({
      task: 'Post',
      tools: ['http_post'],
      callback_url: `https://${RECEIVER}/cb`,
    })
    await drainAlarms(id)
    const pending = (await getRun(id)).pendingApprovals[0]!
    await decide(id, 'call_post', { decision: 'approve', args_hash: pending.argsHash })
    await drainAlarms(id)
    const view = await getRun(id)
    expect(view.createdAt).toMatch(ISO)
    const approval = view.result.steps[0]!.calls[0]!.approval as unknown as Record<string, unknown>
    expect(approval).toMatchObject({ argsHash: pending.argsHash, decision: 'approved' })
    expect(approval).not.toHaveProperty('hash')
    for (const key of ['requestedAt', 'expiresAt', 'decidedAt']) expect(approval[key]).toMatch(ISO)
    expect(await getTrace(id)).toEqual(view.result)
    expect(view.deliveries).toHaveLength(1)
    expect(view.deliveries[0]!.nextAt).toMatch(ISO)
    expect(view.deliveries[0]!.updatedAt).toMatch(ISO)
    expect(JSON.stringify(view)).not.toMatch(/"args_hash"|"hash"/)
  })

  it('the run-finished callback carries the task and the metadata', async () => {
    fakes.ai.enqueue(reply.text('Done.'))
    const id = await startRun({
      task: 'Check the gateway',
      tools: ['calculator'],
      callback_url: `https://${RECEIVER}/cb`,
      metadata: { ticket: 'INC-42', source: 'pagerduty' },
    })
    await drainAlarms(id)
    const hit = fakes.receiver.hits.find((h) => h.path === '/cb')!
    expect(JSON.parse(hit.body)).toMatchObject({
      id,
      ok: true,
      answer: 'Done.',
      task: 'Check the gateway',
      metadata: { ticket: 'INC-42', source: 'pagerduty' },
    })
  })
})
