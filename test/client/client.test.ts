/** `@edgeloop/client` (src/client) against the Worker, through its own fetch. */
import { exports } from 'cloudflare:workers'
import { describe, expect, expectTypeOf, it } from 'vitest'
import {
  EdgeloopClient,
  EdgeloopError,
  type LiveDelta,
  type RunEvent,
  type RunView,
} from '../../src/client'
import type { RunEvent as ServerRunEvent } from '../../src/runs/events/events'
import type { RunView as ServerRunView } from '../../src/runs/types'
import type { ApiRunResult as ServerRunResult } from '../../src/runs/api-result'
import type { RunListItem, ApprovalListItem, Page } from '../../src/runs/index/run-index'
import type { RunResult, RunPage, ApprovalPage, RunListEvent } from '../../src/client'
import type { RunListEventBody } from '../../src/api/response-schemas'
import { reply } from '../fakes/fake-openai'
import { API_TOKEN, drainAlarms, ORIGIN, RECEIVER, useServiceFakes } from '../service/harness'

const fakes = useServiceFakes()

/** Requests made by the client, for asserting what it sent. */
const sent: Request[] = []
const client = new EdgeloopClient({
  baseUrl: `${ORIGIN}/`,
  token: API_TOKEN,
  fetch: (request) => {
    sent.push(request.clone())
    return exports.default.fetch(request)
  },
})

describe('the client types', () => {
  it('are what the server builds (checked by tsc)', () => {
    // The client's types come from the schemas /openapi.json is made of; the server's own
    // types must fit them, or this file does not compile.
    expectTypeOf<ServerRunView>().toExtend<RunView>()
    expectTypeOf<ServerRunResult>().toExtend<RunResult>()
    expectTypeOf<ServerRunEvent>().toExtend<RunEvent>()
    expectTypeOf<Page<RunListItem>>().toExtend<RunPage>()
    expectTypeOf<Page<ApprovalListItem>>().toExtend<ApprovalPage>()
    expectTypeOf<RunListEventBody>().toExtend<RunListEvent>()
  })
})

describe('EdgeloopClient', () => {
  it('starts a run, follows its events, decides the approval, and reads the result', async () => {
    fakes.ai.enqueue(
      reply.toolCalls(
        [
          {
            id: 'call_post',
            name: 'http_post',
            arguments: { url: `https://${RECEIVER}/r`, body: {} },
          },
        ],
        { content: 'Post it.' },
      ),
      reply.text('Posted.'),
    )
    const created = await client.startRun(
      { task: 'Post', tools: ['http_post'], metadata: { from: 'client' } },
      { idempotencyKey: 'client-test-1' },
    )
    expect(created).toMatchObject({ status: 'running', created: true })
    expect(sent.at(-1)!.headers.get('idempotency-key')).toBe('client-test-1')
    expect(sent.at(-1)!.headers.get('authorization')).toBe(`Bearer ${API_TOKEN}`)

    const seen: RunEvent[] = []
    for await (const event of client.events(created.id)) {
      seen.push(event)
      if (event.type === 'step_started') await drainAlarms(created.id)
      if (event.type === 'approval_requested') {
        const inbox = await client.listApprovals()
        expect(inbox.items.find((a) => a.runId === created.id)).toMatchObject({
          callId: 'call_post',
          argsHash: event.data.argsHash,
        })
        const decided = await client.decide(created.id, event.data.callId, {
          decision: 'approve',
          argsHash: event.data.argsHash,
        })
        // The decider is the token's name (the legacy API_TOKEN is named api).
        expect(decided).toMatchObject({ ok: true, decidedBy: 'api', decision: 'approved' })
        await drainAlarms(created.id)
      }
    }
    expect(seen.map((e) => e.type)).toEqual([
      'step_started',
      'model_replied',
      'approval_requested',
      'approval_decided',
      'call_started',
      'call_finished',
      'step_started',
      'model_replied',
      'run_finished',
    ])
    expect(seen.map((e) => e.seq)).toEqual(seen.map((_e, i) => i + 1))

    const run = await client.getRun(created.id)
    expect(run).toMatchObject({ status: 'succeeded', metadata: { from: 'client' } })
    const trace = await client.trace(created.id)
    expect(trace).toMatchObject({ ok: true, answer: 'Posted.', stopReason: 'finish' })
    const page = await client.listRuns({ status: 'succeeded', limit: 100 })
    expect(page.items.map((r) => r.id)).toContain(created.id)
    expect(new URL(sent.at(-1)!.url).search).toBe('?status=succeeded&limit=100')

    // Resuming after event 7 yields exactly the rest.
    const rest: number[] = []
    for await (const event of client.events(created.id, { after: 7 })) rest.push(event.seq)
    expect(rest).toEqual([8, 9])
    expect(sent.at(-1)!.headers.get('last-event-id')).toBe('7')
  })

  it('hands live deltas to onDelta and yields only the stored events', async () => {
    fakes.ai.enqueue(reply.text('Six times seven is 42.'))
    const created = await client.startRun({ task: 'What is 6 * 7?', tools: ['calculator'] })
    const deltas: LiveDelta[] = []
    const seen: string[] = []
    for await (const event of client.events(created.id, { onDelta: (d) => deltas.push(d) })) {
      seen.push(`${event.seq}:${event.type}`)
      if (event.type === 'step_started') await drainAlarms(created.id)
    }
    expect(seen).toEqual(['1:step_started', '2:model_replied', '3:run_finished'])
    expect(deltas.length).toBeGreaterThan(0)
    expect(deltas.every((d) => d.type === 'answer_delta' && d.step === 0)).toBe(true)
    expect(deltas.every((d) => d.attempt === 1)).toBe(true)
    expect(deltas.map((d) => d.delta).join('')).toBe('Six times seven is 42.')
  })

  it('follows the run list (runListChanges), and resumes after an eventId', async () => {
    const controller = new AbortController()
    const changes = client.runListChanges({ signal: controller.signal })
    const ready = (await changes.next()).value!
    expect(ready).toMatchObject({ type: 'ready', relist: true })
    fakes.ai.enqueue(reply.text('Four.'))
    const { id } = await client.startRun({ task: 'Two and two', tools: ['calculator'] })
    await drainAlarms(id)
    let seen
    for await (const change of changes) {
      if (change.type === 'run' && change.run.id === id && change.run.status === 'succeeded') {
        seen = change
        break
      }
    }
    expect(seen).toMatchObject({ run: { id, task: 'Two and two' }, approvals: [] })
    controller.abort()

    const stop = new AbortController()
    const resumed = client.runListChanges({ after: ready.eventId, signal: stop.signal })
    const first = (await resumed.next()).value!
    expect(first).toMatchObject({ type: 'run', run: { id } })
    expect(sent.at(-1)!.headers.get('Last-Event-ID')).toBe(ready.eventId)
    stop.abort()
    await resumed.return(undefined)
  })

  it('cancels a run', async () => {
    fakes.ai.enqueue(reply.hang())
    const { id } = await client.startRun({ task: 'Wait', tools: ['calculator'] })
    expect(await client.cancel(id, { reason: 'not needed' })).toMatchObject({
      id,
      status: 'cancelling',
    })
    await drainAlarms(id)
    expect((await client.trace(id)).stopReason).toBe('cancelled')
    await expect(client.cancel(id)).rejects.toMatchObject({ status: 409, code: 'run_finished' })
  })

  it('exports a run, then deletes it (idempotent; reads are 404 after)', async () => {
    fakes.ai.enqueue(reply.text('Four.'))
    const { id } = await client.startRun({ task: 'Two and two', tools: ['calculator'] })
    await drainAlarms(id)
    const exported = await client.exportRun(id)
    expect(exported).toMatchObject({ format: 'edgeloop.run-export', version: 1, run: { id } })
    expect(exported.trace.answer).toBe('Four.')
    expect(exported.events.at(-1)!.type).toBe('run_finished')
    expect(new URL(sent.at(-1)!.url).pathname).toBe(`/v1/runs/${id}/export`)
    expect(await client.deleteRun(id)).toEqual({ id, status: 'deleted' })
    expect(sent.at(-1)!.method).toBe('DELETE')
    expect(await client.deleteRun(id)).toEqual({ id, status: 'deleted' })
    await expect(client.getRun(id)).rejects.toMatchObject({ status: 404, code: 'run_deleted' })
    await expect(client.exportRun(id)).rejects.toMatchObject({ status: 404, code: 'run_deleted' })
  })

  it("names its token and the token's scopes (me)", async () => {
    expect(await client.me()).toEqual({
      name: 'api',
      scopes: ['runs:write', 'runs:read', 'approvals:write', 'runs:delete', 'service:read'],
      runs: 'all',
    })
    expect(new URL(sent.at(-1)!.url).pathname).toBe('/v1/me')
    const reader = new EdgeloopClient({
      baseUrl: ORIGIN,
      token: 'test-reader-token',
      fetch: (r) => exports.default.fetch(r),
    })
    expect(await reader.me()).toEqual({ name: 'reader', scopes: ['runs:read'], runs: 'all' })
    const alpha = new EdgeloopClient({
      baseUrl: ORIGIN,
      token: 'test-alpha-token',
      fetch: (r) => exports.default.fetch(r),
    })
    expect(await alpha.me()).toMatchObject({ name: 'alpha', runs: 'own' })
  })

  it('turns error answers into EdgeloopError with status and code', async () => {
    const missing = client.getRun(`run_${'0'.repeat(32)}`)
    await expect(missing).rejects.toBeInstanceOf(EdgeloopError)
    await expect(missing).rejects.toMatchObject({ status: 404, code: 'run_not_found' })
    await expect(client.startRun({ task: 'x', tools: ['nope'] })).rejects.toMatchObject({
      status: 400,
      code: 'unknown_tools',
      details: expect.objectContaining({ unknown: ['nope'] }),
    })
    const wrong = new EdgeloopClient({
      baseUrl: ORIGIN,
      token: 'wrong',
      fetch: (r) => exports.default.fetch(r),
    })
    await expect(wrong.listRuns()).rejects.toMatchObject({ status: 401, code: 'unauthorized' })
    expect(() => new EdgeloopClient({ baseUrl: ORIGIN, token: '' })).toThrow(/token/)
  })
})
