/**
 * Tokens limited to their own runs (`"runs": "own"` in API_TOKENS), through the Worker's fetch.
 * vitest.config.ts gives `alpha` and `beta` every scope and only their own runs; `api` (the legacy
 * API_TOKEN) and `reader` reach every run. A run out of reach answers exactly like one that does
 * not exist, on every route; the list and the inbox hold only the token's runs, page after page.
 */
import { env } from 'cloudflare:workers'
import { describe, expect, it } from 'vitest'
import { DEFAULT_BUDGET } from '../../src/kernel/budget'
import { runStub, type RunStoreApi } from '../../src/runs/types'
import { reply } from '../fakes/fake-openai'
import {
  api,
  AUTH,
  drainAlarms,
  getRun,
  hmacHex,
  RECEIVER,
  useServiceFakes,
  WEBHOOK_SECRET,
} from '../service/harness'
import { fetchWith } from '../service/worker-with'

const fakes = useServiceFakes()

const ALPHA = { authorization: 'Bearer test-alpha-token' }
const BETA = { authorization: 'Bearer test-beta-token' }
const READER = { authorization: 'Bearer test-reader-token' }

type Headers = Record<string, string>

function call(path: string, headers: Headers, method = 'GET', body?: unknown) {
  return api(path, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
}

async function errorCode(res: Response): Promise<string> {
  return ((await res.json()) as { error: { code: string } }).error.code
}

async function start(headers: Headers, body: Record<string, unknown>): Promise<string> {
  const res = await call('/v1/runs', headers, 'POST', body)
  const json = (await res.json()) as { id: string }
  expect(res.status, JSON.stringify(json)).toBe(202)
  return json.id
}

const post = (value: number) => ({
  id: `call_post_${value}`,
  name: 'http_post',
  arguments: { url: `https://${RECEIVER}/record`, body: { value } },
})

/** A run of `headers`' token that asked to post and waits for the approval. */
async function awaiting(headers: Headers, value: number): Promise<{ id: string; hash: string }> {
  fakes.ai.enqueue(reply.toolCalls([post(value)], { content: `Post ${value}.` }))
  const id = await start(headers, { task: `Post ${value}`, tools: ['http_post'] })
  await drainAlarms(id)
  return { id, hash: (await getRun(id)).pendingApprovals[0]!.argsHash }
}

/** A finished run of `headers`' token. */
async function finished(headers: Headers, task = 'Add'): Promise<string> {
  fakes.ai.enqueue(reply.text('Done.'))
  const id = await start(headers, { task, tools: ['calculator'] })
  await drainAlarms(id)
  return id
}

const READS = [
  (id: string) => `/v1/runs/${id}`,
  (id: string) => `/v1/runs/${id}/trace`,
  (id: string) => `/v1/runs/${id}/approvals`,
  (id: string) => `/v1/runs/${id}/export`,
  (id: string) => `/v1/runs/${id}/events`,
]

describe('a token limited to its own runs', () => {
  it('reads its own run on every read route; another token limited so gets 404 run_not_found', async () => {
    const id = await finished(ALPHA)
    for (const path of READS.map((read) => read(id))) {
      const own = await call(path, ALPHA)
      expect(own.status, path).toBe(200)
      await own.body?.cancel()
      for (const unlimited of [AUTH, READER]) {
        const res = await call(path, unlimited)
        expect(res.status, path).toBe(200)
        await res.body?.cancel()
      }
      const other = await call(path, BETA)
      expect(other.status, path).toBe(404)
      expect(await errorCode(other)).toBe('run_not_found')
    }
    // The answer for another's run is the answer for no run at all.
    const none = await call(`/v1/runs/run_${'0'.repeat(32)}`, BETA)
    const others = await call(`/v1/runs/${id}`, BETA)
    expect(others.status).toBe(none.status)
    const message = (r: Response) => r.json().then((b) => (b as { error: object }).error)
    expect(await message(others)).toEqual({ code: 'run_not_found', message: `no run ${id}` })
    expect(await message(none)).toEqual({
      code: 'run_not_found',
      message: `no run run_${'0'.repeat(32)}`,
    })
    // The owner who sees the run and asks for an unknown observation learns that, not "no run".
    const obs = `/v1/runs/${id}/observations/obs_nothing`
    expect(await errorCode(await call(obs, ALPHA))).toBe('observation_not_found')
    expect(await errorCode(await call(obs, AUTH))).toBe('observation_not_found')
    const refused = await call(obs, BETA)
    expect(refused.status).toBe(404)
    expect(await errorCode(refused)).toBe('run_not_found')
  })

  it("cannot decide, cancel or delete another token's run, and the run is untouched", async () => {
    const { id, hash } = await awaiting(ALPHA, 1)
    const decision = { decision: 'approve', args_hash: hash }
    const decided = await call(`/v1/runs/${id}/approvals/call_post_1`, BETA, 'POST', decision)
    expect(decided.status).toBe(404)
    expect(await errorCode(decided)).toBe('run_not_found')
    const cancelled = await call(`/v1/runs/${id}/cancel`, BETA, 'POST', {})
    expect(cancelled.status).toBe(404)
    expect(await errorCode(cancelled)).toBe('run_not_found')
    const deleted = await call(`/v1/runs/${id}`, BETA, 'DELETE')
    expect(deleted.status).toBe(404)
    expect(await errorCode(deleted)).toBe('run_not_found')
    expect((await getRun(id)).status).toBe('awaiting_approval')
    expect(fakes.receiver.hits).toHaveLength(0)

    // The owner decides, recorded under its name, and the post happens once.
    fakes.ai.enqueue(reply.text('Posted.'))
    const ok = await call(`/v1/runs/${id}/approvals/call_post_1`, ALPHA, 'POST', decision)
    expect(ok.status).toBe(200)
    expect(await ok.json()).toMatchObject({ decision: 'approved', decidedBy: 'alpha' })
    await drainAlarms(id)
    expect((await getRun(id)).status).toBe('succeeded')
    expect(fakes.receiver.hits).toHaveLength(1)
  })

  it('cancels and deletes its own run; after deleting, it learns the run was deleted', async () => {
    const first = await awaiting(ALPHA, 2)
    const cancelled = await call(`/v1/runs/${first.id}/cancel`, ALPHA, 'POST', {})
    expect(cancelled.status).toBe(202)
    await drainAlarms(first.id)
    expect((await getRun(first.id)).result).toMatchObject({ stopReason: 'cancelled' })

    const deleted = await call(`/v1/runs/${first.id}`, ALPHA, 'DELETE')
    expect(deleted.status).toBe(200)
    await drainAlarms(first.id)
    expect(await errorCode(await call(`/v1/runs/${first.id}`, ALPHA))).toBe('run_deleted')
    // Another limited token still learns nothing about it.
    expect(await errorCode(await call(`/v1/runs/${first.id}`, BETA))).toBe('run_not_found')
    expect(await errorCode(await call(`/v1/runs/${first.id}`, AUTH))).toBe('run_deleted')

    // An unlimited token deletes a limited token's run; that token then sees "not found".
    const second = await finished(ALPHA)
    expect((await call(`/v1/runs/${second}`, AUTH, 'DELETE')).status).toBe(200)
    await drainAlarms(second)
    expect(await errorCode(await call(`/v1/runs/${second}`, ALPHA))).toBe('run_not_found')
  })

  it('continues only its own runs; a follow-up keeps the owner of the run it continues', async () => {
    const alphas = await finished(ALPHA, 'First question')
    const refused = await call('/v1/runs', BETA, 'POST', { task: 'Go on', continue: alphas })
    expect(refused.status).toBe(404)
    expect(await errorCode(refused)).toBe('run_not_found')

    // An unlimited token continues alpha's run: the follow-up is still alpha's.
    fakes.clock.advance(1000)
    fakes.ai.enqueue(reply.text('Second answer.'))
    const followUp = await start(AUTH, { task: 'Second question', continue: alphas })
    await drainAlarms(followUp)
    const view = await getRun(followUp)
    expect(view.requestedBy).toBe('api')
    expect(view.conversation).toMatchObject({ id: alphas, position: 1 })
    expect((await call(`/v1/runs/${followUp}`, ALPHA)).status).toBe(200)
    expect((await call(`/v1/runs/${followUp}`, BETA)).status).toBe(404)

    // Alpha continues the follow-up (its own, by inheritance).
    fakes.clock.advance(1000)
    fakes.ai.enqueue(reply.text('Third answer.'))
    const third = await start(ALPHA, { task: 'Third question', continue: followUp })
    await drainAlarms(third)
    expect((await call(`/v1/runs/${third}`, ALPHA)).status).toBe(200)
    const conversation = await call(`/v1/runs?conversation=${alphas}`, ALPHA)
    const ids = ((await conversation.json()) as { items: { id: string }[] }).items.map((r) => r.id)
    expect(ids).toEqual([third, followUp, alphas])
    const seenByBeta = await call(`/v1/runs?conversation=${alphas}`, BETA)
    expect(((await seenByBeta.json()) as { items: unknown[] }).items).toEqual([])
  })

  it('does not reach runs no token started: signed webhooks and Slack', async () => {
    fakes.ai.enqueue(reply.text('Done.'))
    const body = JSON.stringify({ task: 'From a webhook', tools: ['calculator'] })
    const ts = String(Math.floor(Date.now() / 1000))
    const hooked = await api('/v1/runs', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-edgeloop-timestamp': ts,
        'x-edgeloop-signature': `v1=${await hmacHex(WEBHOOK_SECRET, `${ts}.${body}`)}`,
      },
      body,
    })
    expect(hooked.status).toBe(202)
    const webhookRun = ((await hooked.json()) as { id: string }).id
    await drainAlarms(webhookRun)

    // A Slack-started run, created as the Slack routes create it (no token is its owner).
    const slackRun = `run_${'7'.repeat(32)}`
    await runStub(env.RUNS, slackRun).start({
      id: slackRun,
      task: 'From Slack',
      tools: ['calculator'],
      budget: DEFAULT_BUDGET,
      protocol: 'native',
      policy: { mode: 'ask' },
      requestedBy: 'slack:U123',
      owner: null,
      slack: { channel: 'C123', userId: 'U123' },
    })
    for (const id of [webhookRun, slackRun]) {
      expect((await call(`/v1/runs/${id}`, AUTH)).status).toBe(200)
      const res = await call(`/v1/runs/${id}`, ALPHA)
      expect(res.status).toBe(404)
      expect(await errorCode(res)).toBe('run_not_found')
    }
  })
})

describe('a run from before owners were recorded', () => {
  it('belongs to the token that asked for it, if a token did', async () => {
    const byAlpha = `run_${'8'.repeat(32)}`
    const bySlack = `run_${'9'.repeat(32)}`
    for (const [id, requestedBy] of [
      [byAlpha, 'alpha'],
      [bySlack, 'slack:U123'],
    ] as const) {
      // What such a run stored: its info has no owner.
      const input = {
        id,
        task: 'Older',
        tools: ['calculator'],
        budget: DEFAULT_BUDGET,
        protocol: 'native' as const,
        policy: { mode: 'ask' as const },
        requestedBy,
      }
      await runStub(env.RUNS, id).start(input as Parameters<RunStoreApi['start']>[0])
    }
    expect((await call(`/v1/runs/${byAlpha}`, ALPHA)).status).toBe(200)
    expect((await call(`/v1/runs/${byAlpha}`, BETA)).status).toBe(404)
    expect((await call(`/v1/runs/${bySlack}`, ALPHA)).status).toBe(404)
    expect((await call(`/v1/runs/${bySlack}`, AUTH)).status).toBe(200)
  })
})

describe('the list and the inbox of a token limited to its own runs', () => {
  interface Page<T> {
    items: T[]
    nextCursor: string | null
  }

  /** Every item of a list, page by page (`limit` per page), and the size of each page. */
  async function pages<T>(path: string, headers: Headers, limit: number) {
    const items: T[] = []
    const sizes: number[] = []
    let cursor: string | null = null
    do {
      const sep = path.includes('?') ? '&' : '?'
      const res = await call(
        `${path}${sep}limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`,
        headers,
      )
      const page = (await res.json()) as Page<T>
      expect(res.status, JSON.stringify(page)).toBe(200)
      items.push(...page.items)
      sizes.push(page.items.length)
      cursor = page.nextCursor
    } while (cursor)
    return { items, sizes }
  }

  it('lists only its runs, in full pages, though newer runs of others come first', async () => {
    const own = [await finished(ALPHA, 'alpha 1')]
    fakes.clock.advance(1000)
    own.push(await finished(ALPHA, 'alpha 2'))
    fakes.clock.advance(1000)
    own.push(await finished(ALPHA, 'alpha 3'))
    const betas: string[] = []
    for (let i = 0; i < 4; i++) {
      fakes.clock.advance(1000)
      betas.push(await finished(i % 2 ? BETA : AUTH, `other ${i}`))
    }
    const alpha = await pages<{ id: string }>('/v1/runs', ALPHA, 2)
    const alphaIds = alpha.items.map((r) => r.id)
    // Every run alpha sees is its own, newest first, and all of them are there.
    expect(alphaIds.filter((id) => own.includes(id))).toEqual([...own].reverse())
    expect(alphaIds.some((id) => betas.includes(id))).toBe(false)
    // The filter is in the query: no page is short but the last.
    expect(alpha.sizes.slice(0, -1).every((n) => n === 2)).toBe(true)
    for (const id of alphaIds) expect((await call(`/v1/runs/${id}`, ALPHA)).status).toBe(200)
    // An unlimited token lists them all.
    const all = (await pages<{ id: string }>('/v1/runs', AUTH, 100)).items.map((r) => r.id)
    for (const id of [...own, ...betas]) expect(all).toContain(id)
    // A status filter and the owner filter together.
    const succeeded = await pages<{ id: string }>('/v1/runs?status=succeeded', ALPHA, 1)
    expect(succeeded.items.every((r) => alphaIds.includes(r.id))).toBe(true)
    expect(succeeded.sizes.slice(0, -1).every((n) => n === 1)).toBe(true)
  })

  it("shows only its runs' pending approvals, in full pages", async () => {
    const own = [await awaiting(ALPHA, 10)]
    fakes.clock.advance(1000)
    own.push(await awaiting(ALPHA, 11))
    const others: string[] = []
    for (let i = 0; i < 3; i++) {
      fakes.clock.advance(1000)
      others.push((await awaiting(i % 2 ? BETA : AUTH, 20 + i)).id)
    }
    const alpha = await pages<{ runId: string }>('/v1/approvals', ALPHA, 1)
    const runIds = alpha.items.map((a) => a.runId)
    expect(runIds.filter((id) => own.some((o) => o.id === id))).toEqual(
      own.map((o) => o.id).reverse(),
    )
    expect(runIds.some((id) => others.includes(id))).toBe(false)
    expect(alpha.sizes.slice(0, -1).every((n) => n === 1)).toBe(true)
    const all = (await pages<{ runId: string }>('/v1/approvals', AUTH, 100)).items
    for (const id of [...own.map((o) => o.id), ...others]) {
      expect(all.map((a) => a.runId)).toContain(id)
    }
  })
})

describe('API_TOKENS "runs"', () => {
  const entry = (runs: unknown) =>
    JSON.stringify([
      { name: 'ops', sha256: 'a'.repeat(64), scopes: ['runs:read'], ...(runs ? { runs } : {}) },
    ])

  it('a bad value is a 503 misconfigured naming the entry', async () => {
    for (const runs of ['mine', 7, ['own']]) {
      // With API_TOKENS broken no token authenticates: the summary names the variable, and the
      // message is in the Worker's log (docs/operations.md#readiness).
      const res = await fetchWith({ API_TOKENS: entry(runs), LOG_LEVEL: 'warn' }, '/readyz')
      expect(res.status).toBe(503)
      const body = (await res.json()) as {
        error: { code: string; details: { variables: string[] } }
      }
      expect(body.error).toMatchObject({
        code: 'misconfigured',
        details: { variables: ['API_TOKENS'] },
      })
      const authorized = await fetchWith({ API_TOKENS: entry(runs) }, '/readyz', { headers: AUTH })
      expect(authorized.status).toBe(503)
      expect(await authorized.json()).toMatchObject({
        error: {
          code: 'misconfigured',
          message: expect.stringContaining('API_TOKENS[0].runs must be "all"'),
        },
      })
    }
  })

  it('GET /v1/me says which runs the token reaches', async () => {
    for (const [headers, runs] of [
      [ALPHA, 'own'],
      [AUTH, 'all'],
      [READER, 'all'],
    ] as const) {
      const res = await call('/v1/me', headers)
      expect(await res.json()).toMatchObject({ runs })
    }
  })
})
