/**
 * Real process death around delegation (docs/agents.md#delegation): the `lead` agent delegates
 * to the general agent, whose run posts to the receiver (a side effect) and answers. workerd is
 * SIGKILLed between the parent's `started` record and the child, during the child's run, while
 * the child waits for approval, and just after the child finishes; a new runtime starts on the
 * same storage. Each time: exactly one child run, the side effect at most once, and a parent
 * that finishes with the child's answer. The child is judged by every invariant of the crash
 * test (crash/invariants.ts).
 */
import { createHash } from 'node:crypto'
import { beforeAll, describe, expect, it } from 'vitest'
import { reply, type FakeReply } from '../fakes/fake-openai'
import type { RunView } from '../../src/runs/types'
import { CrashSession, RECEIVER_HOST } from './crash/crash-session'
import { postCall, runRef } from './crash/crash-points'
import { judge } from './crash/judge'
import { bundleWorker } from './worker-runtime'

beforeAll(async () => {
  await bundleWorker()
}, 60_000)

interface DelegationPoint {
  name: string
  bindings?: Record<string, string>
  /** Kills on a log line of the Worker (a transition as it is saved). */
  onLog?: (line: Record<string, unknown>, ids: { child: string }) => boolean
  /** Kills on a view of the parent. */
  onView?: (view: RunView) => boolean
  /** Kills when the child's model call for this step is in flight. */
  childStepInFlight?: number
  postHits: number
}

const ASK = { CONFIRM_POLICY: 'ask' }

const POINTS: DelegationPoint[] = [
  {
    name: "between the parent's started record and the child's creation",
    onLog: (l) => l.msg === 'transition' && l.action === 'start_call' && l.tool === 'ask_default',
    postHits: 1,
  },
  { name: "during the child's run (its model call in flight)", childStepInFlight: 0, postHits: 1 },
  {
    name: 'while the child waits for approval',
    bindings: ASK,
    onView: (v) => v.descendantApprovals.length > 0,
    postHits: 1,
  },
  {
    name: 'just after the child finishes',
    onLog: (l, ids) => l.msg === 'transition' && l.phase === 'done' && l.runId === ids.child,
    postHits: 1,
  },
]

/** The parent's script (by step), and the child's, found by the tag in each run's task. */
function scripts(tag: string): { parent: FakeReply[]; child: FakeReply[] } {
  return {
    parent: [
      reply.toolCalls([
        {
          id: 'call_ask',
          name: 'ask_default',
          arguments: { task: `[${tag}c] Post 42 to the receiver.` },
        },
      ]),
      reply.text('The helper recorded 42.'),
    ],
    child: [reply.toolCalls([postCall()]), reply.text('Posted 42.')],
  }
}

describe.concurrent('delegation killed with SIGKILL', () => {
  it.for(POINTS.map((p) => [p.name, p] as const))('%s', async ([, point], t) => {
    const ids = { child: '' }
    let session!: CrashSession
    let killed = false
    let killedAt = 0
    const kill = (why: string) => {
      if (killed) return
      killed = true
      killedAt = Date.now()
      session.kill(why)
    }
    session = await CrashSession.open({
      ...(point.bindings ? { bindings: point.bindings } : {}),
      onLog: (line) => {
        if (!point.onLog || killed) return
        let parsed: Record<string, unknown>
        try {
          parsed = JSON.parse(line) as Record<string, unknown>
        } catch {
          return
        }
        if (point.onLog(parsed, ids)) kill(`log: ${parsed.action} of ${parsed.runId}`)
      },
    })
    t.onTestFinished(() => session.close())
    const tag = `deleg-${POINTS.indexOf(point)}`
    const { parent: parentScript, child: childScript } = scripts(tag)
    session.model.script(`${tag}c`, childScript)
    if (point.childStepInFlight !== undefined) {
      session.network.intercept({
        match: (r) => r.host === 'api.openai.test' && r.body.includes(`[${tag}c]`),
        when: 'in_flight',
        run: () => kill("the child's model call in flight"),
      })
    }
    const run = runRef(tag)
    run.resolve(await session.startRun({ tag, script: parentScript, agent: 'lead' }))
    // The child's id is derived from the parent's and the call's (runs/child-runs.ts).
    const childId = `run_${createHash('sha256').update(`edgeloop-child:${run.id}:call_ask`).digest('hex').slice(0, 32)}`
    ids.child = childId
    const view = await session.drive(run.id, {
      timeoutMs: 20_000,
      onView: async (v) => {
        if (point.onView?.(v)) kill('parent view: ' + point.name)
        // The person's click, on the child's own approval route.
        for (const a of v.descendantApprovals) {
          await session.approve(a.runId, a.callId, a.argsHash).catch(() => {})
        }
      },
    })
    expect(view, 'the parent never finished by itself').toBeDefined()
    expect(killed, 'the runtime was never killed').toBe(true)
    expect(view!.result).toMatchObject({ ok: true, stopReason: 'finish' })
    expect(view!.result.answer).toBe('The helper recorded 42.')
    // Exactly one child, whatever the kill: the one the call's id names.
    expect(view!.children).toEqual([
      { callId: 'call_ask', runId: childId, agent: 'default', status: 'succeeded' },
    ])
    const asked = session.network.requests.filter(
      (r) => r.host === 'api.openai.test' && r.body.includes('[') && r.body.includes(`c]`),
    )
    const childTasks = new Set(
      asked.map((r) => /\[(deleg-\d+c)\]/.exec(r.body)?.[1]).filter((x) => x !== undefined),
    )
    expect([...childTasks]).toEqual([`${tag}c`])
    expect(view!.result.steps[0]!.calls[0]!.observation).toBe('Posted 42.')
    // The side effect at most once (here exactly once: the kills never cut it off).
    const posts = session.network.requests.filter(
      (r) => r.host === RECEIVER_HOST && r.path === '/effect' && r.delivered,
    )
    expect(posts).toHaveLength(point.postHits)
    // The child keeps every invariant of the crash test.
    const childView = await session.drive(childId)
    const childRun = { id: childId, task: `[${tag}c] Post 42 to the receiver.`, tag: `${tag}c` }
    const { violations } = await judge(session, { ...childRun, script: childScript }, childView)
    expect(violations).toEqual([])
    if (process.env.DELEGATION_CRASH_REPORT) {
      const created = Date.parse((await session.view(childId)).createdAt)
      console.log(`${point.name}: child created ${created - killedAt} ms after the kill`)
    }
  })
})
