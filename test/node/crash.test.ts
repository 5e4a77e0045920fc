/**
 * Real process death at every transition: the Worker as deployed runs in workerd
 * under Miniflare with its Durable Object storage on disk; at each crash point workerd is
 * SIGKILLed, a new runtime starts on the same storage, and the run must finish by itself and
 * keep every invariant (crash/invariants.ts). The crash points are the rows of
 * crash/crash-points.ts.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { CrashSession } from './crash/crash-session'
import { CRASH_POINTS, runRef, standardScript, type CrashPoint } from './crash/crash-points'
import { judge } from './crash/judge'
import { bundleWorker } from './worker-runtime'

beforeAll(async () => {
  await bundleWorker()
}, 60_000)

/** Runs one crash point on its own storage, fake network and runtimes; checks everything. */
async function crashAt(point: CrashPoint, onFinished: (close: () => Promise<void>) => void) {
  const session = await CrashSession.open(point.bindings ? { bindings: point.bindings } : {})
  onFinished(() => session.close())
  const tag = `crash-${CRASH_POINTS.indexOf(point)}`
  const script = (point.script ?? standardScript)(tag)
  // Armed before the run starts: its first model call may come before POST /v1/runs answers.
  const run = runRef(tag)
  point.arm?.(session, run)
  run.resolve(
    point.via === 'mcp'
      ? await session.startServedRun({ tag, script })
      : await session.startRun({
          tag,
          script,
          tools: point.tools ?? ['http_get', 'http_post'],
          ...(point.callback ? { callback: true } : {}),
        }),
  )
  const view = await session.drive(run.id, {
    ...(point.edit ? { edit: point.edit } : {}),
    ...(point.onView ? { onView: (v) => point.onView!(session, run, v) } : {}),
  })
  const { evidence, violations } = await judge(
    session,
    { ...run, script, ...(point.callback ? { callback: true } : {}) },
    view,
  )
  expect(violations).toEqual([])
  // The crash point was really hit, and the run stands where that point leaves it.
  expect(session.kills.length, 'the runtime was never killed').toBeGreaterThan(0)
  expect(session.network.armed).toBe(0)
  const result = evidence.result!
  const post = result.steps.flatMap((st) => st.calls).find((c) => c.id === 'call_post')
  const posts = evidence.requests.filter((r) => r.path === '/effect' && r.delivered)
  const asks = evidence.requests.filter((r) => r.host === 'api.openai.test')
  const callbacks = evidence.requests.filter((r) => r.path === '/callback')
  const want = point.expect
  expect({
    stopReason: result.stopReason,
    ...(want.postKind !== undefined ? { postKind: post?.kind } : {}),
    ...(want.postHits !== undefined ? { postHits: posts.length } : {}),
    ...(want.modelAsks !== undefined ? { modelAsks: asks.length } : {}),
    ...(want.callbackAttempts !== undefined ? { callbackAttempts: callbacks.length } : {}),
  }).toEqual(want)
  // An edited call: what reached the receiver, at most once, is the edit, recorded as such.
  if (point.edit && posts.length) {
    expect(posts.map((p) => JSON.parse(p.body))).toEqual([point.edit.body])
    expect(post?.args).toEqual(point.edit)
    expect(post?.approval?.edit?.originalArgs).toMatchObject({ body: { value: 42 } })
  }
  // A question answered once, by the one answer sent, however the object died.
  const asked = result.steps.flatMap((st) => st.calls).find((c) => c.name === 'ask_person')
  if (asked) {
    expect(asked.approval).toMatchObject({ kind: 'question', decision: 'approved', answer: 'yes' })
    expect(asked.observation).toBe('api answered: yes')
  }
  // The MCP client that started it reads the same end from its task, after every restart.
  if (point.via === 'mcp') {
    const got = await session.mcp('tasks/get', { taskId: run.id })
    expect(got.result).toMatchObject({ taskId: run.id, status: 'completed' })
    const answer = await session.mcp('tasks/result', { taskId: run.id })
    expect(answer.result).toMatchObject({ content: [{ type: 'text', text: result.answer }] })
  }
  // The run index may lag a run, never lose it: whatever the kill cut off (a row written whose
  // mark was still held back for the run's next write), the list ends with the run as it ended.
  expect(await listedRun(session, run.id)).toMatchObject({
    status: result.ok ? 'succeeded' : 'failed',
    stepCount: result.steps.length,
  })
  if (post?.kind === 'outcome_unknown') {
    expect(post.observation).toMatch(/^\[ToolError\] outcome unknown: http_post \(call call_post\)/)
  }
  return result
}

/** The run as `GET /v1/runs` lists it once the list shows it ended (the index may lag). */
async function listedRun(session: CrashSession, id: string): Promise<Record<string, unknown>> {
  let item: Record<string, unknown> | undefined
  for (let tries = 0; tries < 100; tries++) {
    const res = await session.api('/v1/runs?limit=100')
    const page = (await res.json()) as { items: Record<string, unknown>[] }
    item = page.items.find((i) => i.id === id)
    if (item && item.status !== 'running' && item.status !== 'awaiting_approval') return item
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error(`GET /v1/runs never listed run ${id} as ended: ${JSON.stringify(item)}`)
}

// Each point has its own storage, fake network and runtimes, so points run side by side.
describe.concurrent('killed with SIGKILL', () => {
  it.for(CRASH_POINTS.map((p) => [p.name, p] as const))('%s', async ([, point], t) => {
    await crashAt(point, (close) => t.onTestFinished(close))
  })

  // Usage counts a model call whose answer a crash lost: its record was stored
  // before the request left, so the next runtime counts it, its prompt tokens estimated.
  it('usage counts the model call a crash cut off, its prompt tokens estimated', async (t) => {
    const result = await crashAt(CRASH_POINTS[0]!, (close) => t.onTestFinished(close))
    expect(result.usage).toMatchObject({ modelCalls: 4, lostModelCalls: 1, estimated: true })
    expect(result.usage.lostPromptTokens).toBeGreaterThan(0)
    expect(result.steps.map((s) => s.lostModelCalls)).toEqual([1, 0, 0])
  })
})
