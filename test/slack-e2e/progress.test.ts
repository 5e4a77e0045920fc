import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { reply } from '../fakes/fake-openai'
import type { FakeSlackCall } from '../fakes/fake-slack'
import { exports } from 'cloudflare:workers'
import { APPROVER, BASE, SlackWorld } from './harness'

const worker = (exports as unknown as { default: Fetcher }).default

/**
 * Live progress: the run's first thread message is replaced in place with what the
 * run does, at most once a second per run, through the outbox. Time is the harness's clock: the
 * model "takes" `modelLatencyMs` of it per request, so gaps between updates are exact.
 */
let world: SlackWorld
beforeEach(() => {
  world = new SlackWorld()
})
afterEach(() => world.restore())

const QUERIES = ['ERROR', 'timeout', 'deploy', '503', 'WARN', 'retry', 'latency', 'pool']

/** One search_logs call per step, each with other arguments (no loop guard), then an answer. */
function manySteps(n: number) {
  for (let i = 0; i < n; i++) {
    world.model.enqueue(
      reply.toolCalls([
        { name: 'search_logs', arguments: { service: 'gateway', query: QUERIES[i]! } },
      ]),
    )
  }
  world.model.enqueue(reply.text('The gateway pool is exhausted.'))
}

/** Drives the run's alarms (moving the clock) until no delivery is pending. */
async function deliverAll(runId: string, maxAlarms = 40) {
  for (let i = 0; i < maxAlarms; i++) {
    const view = await world.view(runId)
    if (!view.deliveries.some((d) => d.status === 'pending')) return view
    await world.nextAlarm(runId)
  }
  throw new Error(`run ${runId} still has pending deliveries after ${maxAlarms} alarms`)
}

function updates(): FakeSlackCall[] {
  return world.slack.calls.filter((c) => c.method === 'chat.update')
}

function gaps(calls: FakeSlackCall[]): number[] {
  return calls.slice(1).map((c, i) => c.at - calls[i]!.at)
}

describe('live progress in the first thread message', () => {
  it('is replaced in place as the run works, at most once a second, ending with the totals', async () => {
    world.modelLatencyMs = 300
    manySteps(8)
    const { runId } = await world.command('why is the gateway slow?')
    await world.settle(runId)
    const view = await deliverAll(runId)
    expect(view.status).toBe('succeeded')
    expect(view.stepCount).toBe(9)

    const [first, answer] = world.messages()
    expect(world.messages()).toHaveLength(2)
    expect(answer!.thread_ts).toBe(first!.ts)
    expect(answer!.text).toContain('The gateway pool is exhausted.')
    // Every update replaced the first message; nothing else was posted for progress.
    const sent = updates()
    expect(sent.every((c) => c.body?.ts === first!.ts && c.body?.channel === first!.channel)).toBe(
      true,
    )
    expect(first!.updates).toBe(sent.length)
    // Dozens of transitions over 2.7 s of the clock: coalesced, never one per step, never within 1 s.
    expect(sent.length).toBeGreaterThanOrEqual(2)
    expect(sent.length).toBeLessThan(9)
    for (const gap of gaps(sent)) expect(gap).toBeGreaterThanOrEqual(1000)
    const span = sent.at(-1)!.at - sent[0]!.at
    expect(sent.length).toBeLessThanOrEqual(Math.floor(span / 1000) + 1)
    // An update while it works names the step and the call.
    expect(sent[0]!.body?.text).toMatch(
      /^:hourglass_flowing_sand: Working on it \(run `run_[0-9a-f]{32}`\): why is the gateway slow\?\nstep 1 · search_logs\(service=gateway, query=ERROR\) …$/,
    )
    // The last state wins: the totals, as the run view counts them.
    const tokens = view.result.usage.promptTokens + view.result.usage.completionTokens
    expect(first!.text).toBe(
      `:white_check_mark: Done (run \`${runId}\`): why is the gateway slow?\n` +
        `done in 9 steps · ${tokens} tokens`,
    )
    expect(view.deliveries.find((d) => d.id === 'slack.progress')).toMatchObject({
      status: 'delivered',
    })
  })

  it('says it waits for approval, then how the run ended', async () => {
    world.model.enqueue(
      reply.toolCalls([
        { name: 'http_post', arguments: { url: 'https://receiver.test/tickets', body: { t: 1 } } },
      ]),
      reply.text('Filed the ticket.'),
    )
    const { runId } = await world.command('file a ticket')
    await world.settle(runId)
    await deliverAll(runId)
    const first = world.messages()[0]!
    expect(first.text).toMatch(
      /\nstep 1 · waiting for approval: http_post\(url=https:\/\/receiver\.test\/tickets, body=\{"t":1\}\)$/,
    )

    world.advance(1_000)
    await world.click(world.approvalMessage(), 'approve', APPROVER)
    await world.settle(runId)
    await deliverAll(runId)
    expect(world.received).toHaveLength(1)
    expect(world.messages()[0]!.text).toMatch(
      /^:white_check_mark: Done .*\ndone in 2 steps · 30 tokens$/,
    )
  })

  it('says a failed run stopped and why', async () => {
    world.model.enqueue(reply.error(401, 'Incorrect API key provided'))
    const { runId } = await world.command('check the gateway')
    await world.settle(runId)
    await deliverAll(runId)
    expect(world.messages()[0]!.text).toMatch(
      /^:x: Failed \(run `run_\w+`\): check the gateway\nstopped \(model_error\) after 0 steps · 0 tokens$/,
    )
  })

  it('sends nothing for a run not started from Slack', async () => {
    world.modelLatencyMs = 300
    manySteps(2)
    const res = await worker.fetch(`${BASE}/v1/runs`, {
      method: 'POST',
      headers: { authorization: 'Bearer test-token', 'content-type': 'application/json' },
      body: JSON.stringify({ task: 'why is the gateway slow?' }),
    })
    expect(res.status).toBe(202)
    const { id } = (await res.json()) as { id: string }
    await world.settle(id)
    expect((await world.view(id)).status).toBe('succeeded')
    expect(world.slack.calls).toEqual([])
  })
})

describe('a Slack outage mid-run', () => {
  it.each([
    ['5xx', { status: 503 } as const, { status: 502 } as const],
    [
      'ratelimited with Retry-After',
      { status: 429, retryAfter: 5 } as const,
      { status: 500 } as const,
    ],
  ])(
    'does not hold the run (%s), and progress catches up with the last state after',
    async (_n, a, b) => {
      world.modelLatencyMs = 300
      manySteps(6)
      // From the 3rd model request on, Slack fails every call for a while.
      world.onModelRequest = (n) => {
        if (n !== 3) return
        world.slack.failNext('chat.update', a).failNext('chat.update', b).failNext('chat.update', a)
        world.slack.failNext('chat.postMessage', b)
      }
      const { runId } = await world.command('why is the gateway slow?')
      await world.settle(runId)
      let view = await world.view(runId)
      // The run finished while Slack was failing.
      expect(view.status).toBe('succeeded')
      expect(world.model.bodies).toHaveLength(7)

      view = await deliverAll(runId)
      const first = world.messages()[0]!
      expect(first.text).toMatch(/^:white_check_mark: Done .*\ndone in 7 steps · \d+ tokens$/)
      expect(world.messages().at(-1)!.text).toContain('The gateway pool is exhausted.')
      const all = updates()
      const failedAt = all.findIndex((c) => c.status !== 200)
      expect(failedAt).toBeGreaterThan(-1)
      expect(all.filter((c) => c.status !== 200)).toHaveLength(3)
      // Once Slack answers again, one update carries the last state: no replay of missed steps.
      const after = all.slice(failedAt).filter((c) => c.status === 200)
      expect(after).toHaveLength(1)
      expect(after[0]!.body?.text).toBe(first.text)
      // Retries keep the pace too (backoff or Retry-After, never under a second).
      for (const gap of gaps(all)) expect(gap).toBeGreaterThanOrEqual(1000)
      if ('retryAfter' in a) {
        const limited = all.findIndex((c) => c.status === 429)
        expect(all[limited + 1]!.at - all[limited]!.at).toBeGreaterThanOrEqual(5000)
      }
      expect(view.deliveries.find((d) => d.id === 'slack.progress')).toMatchObject({
        status: 'delivered',
      })
    },
  )
})
