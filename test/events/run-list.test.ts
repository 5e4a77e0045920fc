/** `GET /v1/runs` and `GET /v1/approvals`: the D1 run index, written via the outbox. */
import { env } from 'cloudflare:workers'
import { describe, expect, it, vi } from 'vitest'
import { writeRunIndex, type RunIndexEntry } from '../../src/runs/index/run-index'
import { reply } from '../fakes/fake-openai'
import {
  api,
  AUTH,
  decide,
  drainAlarms,
  getRun,
  hmacHex,
  RECEIVER,
  startRun,
  useServiceFakes,
  WEBHOOK_SECRET,
} from '../service/harness'

const fakes = useServiceFakes()

interface ListPage<T> {
  items: T[]
  nextCursor: string | null
}
type Listed = {
  id: string
  task: string
  status: string
  createdAt: string
  updatedAt: string
  stepCount: number
  requestedBy: string
  metadata?: Record<string, unknown>
}
type Inbox = {
  runId: string
  callId: string
  tool: string
  args: Record<string, unknown>
  argsHash: string
  reason: string
  requestedBy: string
  requestedAt: string
  expiresAt: string
}

async function list<T = Listed>(path: string): Promise<ListPage<T>> {
  const res = await api(path, { headers: AUTH })
  const body = (await res.json()) as ListPage<T>
  expect(res.status, JSON.stringify(body)).toBe(200)
  return body
}

/** The listed runs among `ids` (the index is shared by the tests of this file). */
async function listed(ids: string[], query = ''): Promise<Listed[]> {
  const page = await list(`/v1/runs?limit=100${query}`)
  return page.items.filter((r) => ids.includes(r.id))
}

const post = (value: number) => ({
  id: `call_post_${value}`,
  name: 'http_post',
  arguments: { url: `https://${RECEIVER}/record`, body: { value } },
})

/** A run that has asked to post and waits for the approval. */
async function awaitingRun(value: number, metadata?: Record<string, unknown>): Promise<string> {
  fakes.ai.enqueue(reply.toolCalls([post(value)], { content: `Post ${value}.` }))
  const id = await startRun({
    task: `Post ${value}`,
    tools: ['http_post'],
    ...(metadata ? { metadata } : {}),
  })
  await drainAlarms(id)
  return id
}

describe('GET /v1/runs', () => {
  it('lists runs newest first with their status, and follows them as they change', async () => {
    fakes.ai.enqueue(reply.text('Done.'))
    const long = 'x'.repeat(300)
    const done = await startRun({ task: long, tools: ['calculator'], metadata: { ticket: 'T-1' } })
    await drainAlarms(done)
    fakes.clock.advance(1_000)
    const waiting = await awaitingRun(1)

    const rows = await listed([done, waiting])
    expect(rows.map((r) => r.id)).toEqual([waiting, done])
    expect(rows[1]).toEqual({
      id: done,
      task: 'x'.repeat(200),
      status: 'succeeded',
      createdAt: new Date(fakes.clock.now() - 1_000).toISOString(),
      updatedAt: expect.any(String),
      stepCount: 1,
      requestedBy: 'api',
      metadata: { ticket: 'T-1' },
      agent: { name: 'default', version: expect.stringMatching(/^[0-9a-f]{12}$/) },
      conversation: { id: done, position: 0 },
    })
    expect(rows[0]).toMatchObject({ status: 'awaiting_approval', stepCount: 1, task: 'Post 1' })
    expect((await listed([done, waiting], '&status=awaiting_approval')).map((r) => r.id)).toEqual([
      waiting,
    ])
    expect((await listed([done, waiting], '&status=succeeded')).map((r) => r.id)).toEqual([done])

    fakes.ai.enqueue(reply.text('Posted.'))
    const pending = (await getRun(waiting)).pendingApprovals[0]!
    fakes.clock.advance(5_000)
    await decide(waiting, pending.callId, { decision: 'approve', args_hash: pending.argsHash })
    await drainAlarms(waiting)
    const [after] = await listed([waiting])
    expect(after).toMatchObject({ status: 'succeeded', stepCount: 2 })
    expect(Date.parse(after!.updatedAt)).toBe(fakes.clock.now())
  })

  it('pages with a cursor that stays stable while new runs start', async () => {
    const ids: string[] = []
    for (let n = 0; n < 5; n++) {
      fakes.ai.enqueue(reply.text('Done.'))
      ids.push(
        await startRun({ task: `Run ${n}`, tools: ['calculator'], metadata: { batch: 'p' } }),
      )
      await drainAlarms(ids.at(-1)!)
      fakes.clock.advance(1_000)
    }
    const seen: string[] = []
    let cursor: string | null = null
    let pages = 0
    do {
      const page: ListPage<Listed> = await list(
        `/v1/runs?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
      )
      expect(page.items.length).toBeLessThanOrEqual(2)
      seen.push(...page.items.map((r) => r.id))
      cursor = page.nextCursor
      pages++
      // A run started between pages sorts before the cursor: it moves nothing after it.
      fakes.ai.enqueue(reply.text('Done.'))
      const late = await startRun({ task: 'Late', tools: ['calculator'] })
      await drainAlarms(late)
      fakes.clock.advance(1_000)
    } while (cursor && pages < 50)
    const mine = seen.filter((id) => ids.includes(id))
    expect(mine).toEqual([...ids].reverse())
    expect(new Set(seen).size).toBe(seen.length)
  })

  it.each([
    ['status', '?status=done', 'invalid_query'],
    ['limit', '?limit=0', 'invalid_query'],
    ['limit', '?limit=101', 'invalid_query'],
    ['limit', '?limit=abc', 'invalid_query'],
    ['cursor', '?cursor=not-a-cursor', 'invalid_cursor'],
    // Decodes to a cursor's shape, but padded base64 is not what the server writes (base64url).
    ['cursor', `?cursor=${encodeURIComponent(btoa(JSON.stringify([1, 'x'])))}`, 'invalid_cursor'],
  ])('a bad %s is a 400 (%s)', async (_name, query, code) => {
    const res = await api(`/v1/runs${query}`, { headers: AUTH })
    expect(res.status).toBe(400)
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe(code)
  })

  it.each(['/v1/runs', '/v1/approvals'])(
    '%s needs the API token, not a webhook signature',
    async (path) => {
      expect((await api(path)).status).toBe(401)
      const ts = String(Math.floor(Date.now() / 1000))
      const res = await api(path, {
        headers: {
          'x-edgeloop-timestamp': ts,
          'x-edgeloop-signature': `v1=${await hmacHex(WEBHOOK_SECRET, `${ts}.`)}`,
        },
      })
      expect(res.status).toBe(403)
    },
  )
})

describe('the index is written through the outbox', () => {
  it('catches up after a failed index write', async () => {
    const d1 = Object.getPrototypeOf(env.RUN_INDEX) as D1Database
    const batch = vi
      .spyOn(d1, 'batch')
      .mockRejectedValueOnce(new Error('D1_ERROR: Network connection lost.'))
    fakes.ai.enqueue(reply.text('Done.'))
    const id = await startRun({ task: 'Index me', tools: ['calculator'] })
    await drainAlarms(id)
    expect(batch).toHaveBeenCalled()
    // The run went on; its index row did not land and waits for a retry.
    const view = await getRun(id)
    expect(view.status).toBe('succeeded')
    const delivery = view.deliveries.find((d) => d.kind === 'index')!
    expect(delivery).toMatchObject({ status: 'pending', attempts: 1 })
    expect(delivery.lastError).toMatch(/Network connection lost/)
    expect(await listed([id])).toEqual([])

    fakes.clock.advance(Date.parse(delivery.nextAt) - fakes.clock.now())
    await drainAlarms(id)
    expect(await listed([id])).toEqual([expect.objectContaining({ id, status: 'succeeded' })])
    expect((await getRun(id)).deliveries.find((d) => d.kind === 'index')).toBeUndefined()
  })

  it('an older write never replaces a newer one', async () => {
    const entry = (version: number, status: RunIndexEntry['status']): RunIndexEntry => ({
      id: `run_${'a'.repeat(31)}${version}`.slice(0, 36).replace(/.$/, 'f'),
      task: 'Versioned',
      status,
      createdAt: 1,
      updatedAt: version,
      stepCount: version,
      requestedBy: 'api',
      owner: 'api',
      version,
      approvals: [],
    })
    await writeRunIndex(env.RUN_INDEX, entry(5, 'succeeded'))
    await writeRunIndex(env.RUN_INDEX, entry(3, 'running'))
    const row = await env.RUN_INDEX.prepare('SELECT status, steps, version FROM runs WHERE id = ?')
      .bind(entry(5, 'succeeded').id)
      .first()
    expect(row).toEqual({ status: 'succeeded', steps: 5, version: 5 })
  })
})

describe('GET /v1/approvals', () => {
  it('lists pending approvals across runs, and drops them once decided or expired', async () => {
    const a = await awaitingRun(1)
    fakes.clock.advance(1_000)
    const b = await awaitingRun(2)
    const inbox = async () =>
      (await list<Inbox>('/v1/approvals?status=pending&limit=100')).items.filter((i) =>
        [a, b].includes(i.runId),
      )
    const items = await inbox()
    const pendingB = (await getRun(b)).pendingApprovals[0]!
    expect(items.map((i) => i.runId)).toEqual([b, a])
    expect(items[0]).toEqual({
      runId: b,
      callId: 'call_post_2',
      tool: 'http_post',
      args: { url: `https://${RECEIVER}/record`, body: { value: 2 } },
      argsHash: pendingB.argsHash,
      reason: 'Post 2.',
      requestedBy: 'api',
      requestedAt: pendingB.requestedAt,
      expiresAt: pendingB.expiresAt,
      kind: 'approval',
      ask: null,
      editSchema: pendingB.editSchema,
      actions: ['approve', 'deny', 'edit'],
      href: `/v1/runs/${b}/approvals/call_post_2`,
    })
    expect(pendingB.editSchema).toMatchObject({ required: ['url', 'body'] })

    fakes.ai.enqueue(reply.text('Not posted.'))
    await decide(b, pendingB.callId, { decision: 'deny', args_hash: pendingB.argsHash })
    await drainAlarms(b)
    expect((await inbox()).map((i) => i.runId)).toEqual([a])

    // Past its expiry an approval is no longer offered, even before the run notices.
    fakes.clock.advance(
      Date.parse((await getRun(a)).pendingApprovals[0]!.expiresAt) - fakes.clock.now(),
    )
    expect(await inbox()).toEqual([])
  })

  it('drops an approval once decided while the step waits for another', async () => {
    fakes.ai.enqueue(reply.toolCalls([post(6), post(7)], { content: 'Post 6 and 7.' }))
    const id = await startRun({ task: 'Post 6 and 7', tools: ['http_post'] })
    await drainAlarms(id)
    const pending = async () =>
      (await list<Inbox>('/v1/approvals?status=pending&limit=100')).items
        .filter((i) => i.runId === id)
        .map((i) => i.callId)
        .sort()
    expect(await pending()).toEqual(['call_post_6', 'call_post_7'])

    const first = (await getRun(id)).pendingApprovals.find((a) => a.callId === 'call_post_6')!
    await decide(id, first.callId, { decision: 'deny', args_hash: first.argsHash })
    await drainAlarms(id)
    // The run still waits for the other decision; the inbox offers only that one.
    expect((await getRun(id)).status).toBe('awaiting_approval')
    expect(await pending()).toEqual(['call_post_7'])
  })

  it('pages with a cursor', async () => {
    const ids = [await awaitingRun(3), await awaitingRun(4), await awaitingRun(5)]
    const seen: string[] = []
    let cursor: string | null = null
    do {
      const page: ListPage<Inbox> = await list(
        `/v1/approvals?limit=1${cursor ? `&cursor=${cursor}` : ''}`,
      )
      seen.push(...page.items.map((i) => i.runId))
      cursor = page.nextCursor
    } while (cursor)
    expect(ids.every((id) => seen.includes(id))).toBe(true)
    expect(new Set(seen).size).toBe(seen.length)
  })

  it('only status=pending is offered', async () => {
    const res = await api('/v1/approvals?status=decided', { headers: AUTH })
    expect(res.status).toBe(400)
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('invalid_query')
  })
})
