/**
 * The run index's D1 round trips in the deployed bundle, counted inside workerd by the first-run
 * timeline's wrapper (bench/first-run-timeline.mjs: every D1 batch and single statement): an
 * isolate's first index access is one round trip on a new database and, after a restart (a new
 * isolate) on the same storage, on the up-to-date database it left
 * (docs/development.md#the-first-run-third-round-the-timeline-and-the-index-schema).
 */
import { afterAll, describe, expect, it } from 'vitest'
import { timelineEvent, withTimeline } from '../../bench/first-run-timeline.mjs'
import { bundleWorker, tempStorage, WorkerRuntime } from './worker-runtime'

const TOKEN = 'round-trips-token'

describe('run index round trips', () => {
  const cleanup: (() => Promise<void>)[] = []
  afterAll(async () => {
    for (const done of cleanup.reverse()) await done()
  })

  it("an isolate's first list is one D1 round trip, on a new database and after a restart", async () => {
    const dir = await tempStorage()
    cleanup.push(dir.remove)
    const worker = withTimeline({ ...(await bundleWorker()), assets: undefined })
    const trips: string[] = []
    const start = () =>
      WorkerRuntime.start({
        worker,
        storage: dir.path,
        bindings: {
          API_TOKEN: TOKEN,
          WEBHOOK_SECRET: 'round-trips-webhook-secret',
          OPENAI_API_KEY: 'sk-round-trips-0000000000',
          MODEL: 'gpt-test',
          LOG_LEVEL: 'silent',
        },
        outbound: async () => new Response('no such host', { status: 502 }),
        onLog: (line) => {
          const e = timelineEvent(line)
          if (e?.event === 'd1') trips.push(e.detail)
        },
      })
    const list = async (rt: WorkerRuntime) => {
      const res = await rt.fetch('/v1/runs?limit=5', {
        headers: { authorization: `Bearer ${TOKEN}` },
      })
      expect(res.status).toBe(200)
      expect(((await res.json()) as { items: unknown[] }).items).toEqual([])
    }
    // Log lines arrive after the answer: wait until `n` round trips were logged.
    const logged = async (n: number) => {
      for (let i = 0; i < 200 && trips.length < n; i++) await new Promise((r) => setTimeout(r, 25))
      return [...trips]
    }

    const first = await start()
    cleanup.push(() => first.stop())
    await list(first)
    await list(first)
    // The schema (11 statements), the query and a look at each table's columns; then the query.
    expect(await logged(2)).toEqual(['14 statements', '1 statement'])
    await first.stop()

    trips.length = 0
    const again = await start()
    cleanup.push(() => again.stop())
    await list(again)
    expect(await logged(1)).toEqual(['14 statements'])
  })
})
