/**
 * What a run writes to its Durable Object's SQLite, counted inside workerd by the peer bench's
 * own counter (bench/sql-count.mjs: every `ctx.storage.sql.exec` of the bundle as deployed)
 * for the peer bench's task: model → http_get → model → http_get → answer, with a callback.
 * The goal of docs/development.md#the-peer-bench is at most 30 write statements a run; this
 * keeps a change that adds writes from passing unnoticed, the statements in its message.
 */
import { afterAll, describe, expect, it } from 'vitest'
import { storageCounts, withStorageCounts } from '../../bench/sql-count.mjs'
import { FAKE_OPENAI_BASE_URL, FAKE_OPENAI_KEY, FakeOpenAI, reply } from '../fakes/fake-openai'
import { bundleWorker, tempStorage, WorkerRuntime } from './worker-runtime'

const MAX_WRITES_PER_RUN = 30
const PAGES = 'pages.test'
const RECEIVER = 'receiver.test'
const TOKEN = 'writes-token'
const PAGE = 'line: ok\n'.repeat(110).slice(0, 1024)

describe('SQL writes of a run', () => {
  const cleanup: (() => Promise<void>)[] = []
  afterAll(async () => {
    for (const done of cleanup.reverse()) await done()
  })

  it('a two-call run with a callback writes at most 30 statements, each run alike', async () => {
    const api = new FakeOpenAI({ apiKey: FAKE_OPENAI_KEY })
    const callbacks = new Map<string, () => void>()
    const finished = (id: string) => new Promise<void>((resolve) => callbacks.set(id, resolve))
    const dir = await tempStorage()
    cleanup.push(dir.remove)
    const worker = withStorageCounts({ ...(await bundleWorker()), assets: undefined }, ['RunStore'])
    const rt = await WorkerRuntime.start({
      worker,
      storage: dir.path,
      bindings: {
        API_TOKEN: TOKEN,
        WEBHOOK_SECRET: 'writes-webhook-secret',
        OPENAI_API_KEY: FAKE_OPENAI_KEY,
        OPENAI_BASE_URL: FAKE_OPENAI_BASE_URL,
        MODEL: 'gpt-test',
        MODEL_PROTOCOL: 'native',
        MODEL_STREAM: 'off',
        MODEL_MAX_RETRIES: '0',
        ENABLED_TOOLS: 'http_get',
        HTTP_ALLOWLIST: PAGES,
        CALLBACK_ALLOWLIST: RECEIVER,
        LOG_LEVEL: 'silent',
      },
      outbound: async (req) => {
        const url = new URL(req.url)
        if (url.host === 'api.openai.test') return api.handler(req)
        if (url.host === PAGES)
          return new Response(PAGE, { headers: { 'content-type': 'text/plain' } })
        if (url.host === RECEIVER) {
          callbacks.get(req.headers.get('x-edgeloop-run-id') ?? '')?.()
          return new Response(null, { status: 204 })
        }
        return new Response('no such host', { status: 502 })
      },
    })
    cleanup.push(() => rt.stop())
    const base = await rt.url()
    const perRun: Awaited<ReturnType<typeof storageCounts>>[] = []
    for (let n = 0; n < 2; n++) {
      api.enqueue(
        reply.toolCalls([{ name: 'http_get', arguments: { url: `https://${PAGES}/1` } }]),
        reply.toolCalls([{ name: 'http_get', arguments: { url: `https://${PAGES}/2` } }]),
        reply.text('Both pages say ok.'),
      )
      await storageCounts(base)
      const res = await rt.fetch('/v1/runs', {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          task: `Read pages 1 and 2, then say what they say (${n}).`,
          tools: ['http_get'],
          callback_url: `https://${RECEIVER}/done`,
        }),
      })
      expect(res.status).toBe(202)
      const { id } = (await res.json()) as { id: string }
      await finished(id)
      // The callback is the last delivery; its mark follows its answer.
      const view = await waitFor(async () => {
        const got = await rt.fetch(`/v1/runs/${id}`, {
          headers: { authorization: `Bearer ${TOKEN}` },
        })
        const body = (await got.json()) as { status: string; deliveries?: { status: string }[] }
        return body.status === 'succeeded' && !JSON.stringify(body).includes('"pending"')
          ? body
          : undefined
      })
      expect(view).toMatchObject({ status: 'succeeded', result: { answer: 'Both pages say ok.' } })
      perRun.push(await storageCounts(base))
    }
    expect(api.bodies).toHaveLength(6)
    expect(api.violations).toEqual([])
    for (const counts of perRun) {
      const statements = Object.entries(counts.byStatement)
        .map(([sql, times]) => `${times} × ${sql}`)
        .join('\n')
      expect(counts.writes, statements).toBeGreaterThan(0)
      expect(counts.writes, statements).toBeLessThanOrEqual(MAX_WRITES_PER_RUN)
    }
    expect(perRun[1]!.writes).toBe(perRun[0]!.writes)
  })
})

async function waitFor<T>(read: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 400; i++) {
    const got = await read()
    if (got !== undefined) return got
    await new Promise((r) => setTimeout(r, 25))
  }
  throw new Error('the run did not settle within 10 s')
}
