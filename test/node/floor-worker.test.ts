/**
 * The peer bench's floor (bench/floor/: the least code doing the bench's task as edgeloop does
 * it) in the bench's own harness: its bundle and each variant's in a workerd under Miniflare
 * (bench/workerd-cpu.mjs), the bench's fake model, pages and callback receiver
 * (bench/peer-cost.mjs's network), started the way the bench starts edgeloop's runs. Each must
 * do the whole task, or its figures in the bench would price less than the task
 * (docs/development.md#the-peer-bench).
 */
import { createHmac } from 'node:crypto'
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { afterAll, describe, expect, it } from 'vitest'
import { bundleFloor, FLOOR_VARIANTS } from '../../bench/floor/build.mjs'
import { network, SYSTEMS, TASK_BINDINGS } from '../../bench/peer-cost.mjs'
import { storageCounts, withStorageCounts } from '../../bench/sql-count.mjs'
import { CALLBACK_HOST, startBenchWorker } from '../../bench/workerd-cpu.mjs'

const root = join(import.meta.dirname, '..', '..')
const RUNS = 2
const ANSWER = 'Both pages say ok.'

/** Every row of `table` in the SQLite files of `folder` (Miniflare's layout), read while workerd runs. */
function rows(folder: string, table: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = []
  let files: string[]
  try {
    files = readdirSync(folder).filter((f) => f.endsWith('.sqlite') && f !== 'metadata.sqlite')
  } catch {
    return out
  }
  for (const file of files) {
    const db = new DatabaseSync(join(folder, file), { readOnly: true, timeout: 10_000 })
    try {
      out.push(...(db.prepare(`SELECT * FROM ${table}`).all() as Record<string, unknown>[]))
    } finally {
      db.close()
    }
  }
  return out
}

async function until<T>(read: () => T | undefined, what: string): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const got = read()
    if (got !== undefined) return got
    await new Promise((r) => setTimeout(r, 25))
  }
  throw new Error(`${what} did not happen within 5 s`)
}

describe('the peer bench floor', () => {
  const cleanup: (() => Promise<void>)[] = []
  afterAll(async () => {
    for (const done of cleanup.reverse()) await done()
  })

  async function startFloor(variant: string) {
    const net = network()
    const callbacks: { headers: Headers; body: string }[] = []
    const build = withStorageCounts(await bundleFloor(root, variant), SYSTEMS[variant]!.classes)
    const started = await startBenchWorker(
      async (request) => {
        if (new URL(request.url).host === CALLBACK_HOST && request.method === 'POST') {
          callbacks.push({ headers: request.headers, body: await request.clone().text() })
        }
        return net.outbound(request, variant)
      },
      TASK_BINDINGS,
      { worker: build },
    )
    cleanup.push(started.stop)
    return { ...started, net, callbacks, base: await started.rt.url() }
  }

  it.each(Object.entries(FLOOR_VARIANTS))(
    '%s: each run makes 3 model calls and 2 page reads, stores its steps, calls back signed',
    async (variant, { index }) => {
      const floor = await startFloor(variant)
      await storageCounts(floor.base)
      for (let n = 0; n < RUNS; n++) await SYSTEMS[variant]!.run(floor.base, floor.net, n)

      expect(floor.net.seen[variant]).toEqual({ model: 3 * RUNS, pages: 2 * RUNS })
      expect(floor.callbacks).toHaveLength(RUNS)
      for (const { headers, body } of floor.callbacks) {
        const timestamp = headers.get('x-edgeloop-timestamp')
        const mac = createHmac('sha256', 'bench-webhook-secret')
          .update(`edgeloop-callback.${timestamp}.${body}`)
          .digest('hex')
        expect(headers.get('x-edgeloop-signature')).toBe(`c1=${mac}`)
        expect(JSON.parse(body)).toMatchObject({ ok: true, answer: ANSWER, steps: 3 })
      }
      const counts = await storageCounts(floor.base)
      const times = (prefix: string) =>
        Object.entries(counts.byStatement)
          .filter(([statement]) => statement.startsWith(prefix))
          .reduce((n, [, count]) => n + count, 0)
      // Per run: the run's row, five steps (three answers of the model, two pages), its end.
      expect(times('INSERT INTO run ')).toBe(RUNS)
      expect(times('INSERT INTO step ')).toBe(5 * RUNS)
      expect(times('UPDATE run SET status')).toBe(RUNS)
      expect(counts.alarms).toBe(RUNS)

      const runs = rows(join(floor.storage, 'do', '-RunStore'), 'run')
      expect(runs).toHaveLength(RUNS)
      for (const run of runs) expect(run).toMatchObject({ status: 'succeeded', answer: ANSWER })
      const steps = rows(join(floor.storage, 'do', '-RunStore'), 'step')
      expect(steps.map((s) => JSON.parse(String(s.message)).role)).toEqual(
        Array.from({ length: RUNS }, () => [
          'assistant',
          'tool',
          'assistant',
          'tool',
          'assistant',
        ]).flat(),
      )

      // The run index: each run's row, written as it started and again as it ended.
      const indexFolder = join(floor.storage, 'd1', 'miniflare-D1DatabaseObject')
      if (!index) {
        expect(rows(indexFolder, 'runs')).toEqual([])
        return
      }
      const indexed = await until(() => {
        const all = rows(indexFolder, 'runs')
        return all.length === RUNS && all.every((r) => r.status === 'succeeded') ? all : undefined
      }, 'both runs indexed as succeeded')
      expect(indexed.map((r) => r.id).sort()).toEqual(runs.map((r) => r.id).sort())
      for (const row of indexed) expect(row).toMatchObject({ steps: 3 })
    },
  )

  it('refuses a bad request with a 4xx and a JSON error, and starts no run', async () => {
    const floor = await startFloor('floor')
    const post = (body: string, token = 'bench-token') =>
      fetch(new URL('/v1/runs', floor.base), {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body,
      })
    const cases: [Promise<Response>, number, string][] = [
      [post('{"task":"x"}', 'wrong-token'), 401, 'unauthorized'],
      [post('{"task":'), 400, 'invalid_json'],
      [post('{"task":""}'), 400, 'invalid_request'],
      [post('{"task":"x","tools":["calculator"]}'), 400, 'invalid_request'],
      [post('{"task":"x","callback_url":"https://elsewhere.test/done"}'), 400, 'invalid_request'],
      [fetch(new URL('/v1/runs', floor.base)), 404, 'not_found'],
    ]
    for (const [response, status, code] of cases) {
      const res = await response
      expect(res.status).toBe(status)
      expect(await res.json()).toMatchObject({ error: { code, message: expect.any(String) } })
    }
    expect(floor.net.seen.floor ?? { model: 0, pages: 0 }).toEqual({ model: 0, pages: 0 })
    expect(rows(join(floor.storage, 'do', '-RunStore'), 'run')).toEqual([])
  })
})
