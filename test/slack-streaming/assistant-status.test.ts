import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { reply } from '../fakes/fake-openai'
import { CHANNEL, SlackWorld } from '../slack-e2e/harness'

/**
 * SLACK_ASSISTANT=true: while a run works its thread's assistant status says what it does
 * (`assistant.threads.setStatus`), coalesced through the outbox, and is cleared at the end.
 */
let world: SlackWorld
beforeEach(() => {
  world = new SlackWorld()
})
afterEach(() => world.restore())

describe('the assistant thread status', () => {
  it('says what the run does while it works and is cleared when it ends', async () => {
    world.modelLatencyMs = 1_500
    world.model.enqueue(
      reply.toolCalls([{ name: 'search_logs', arguments: { service: 'gateway', query: 'pool' } }]),
      reply.text('The pool is exhausted.'),
    )
    const { runId } = await world.command('why is the gateway slow?')
    await world.settle(runId)
    const view = await world.deliverAll(runId)
    expect(view.status).toBe('succeeded')

    const [first] = world.messages()
    const statuses = world.slack.statuses
    expect(statuses.length).toBeGreaterThanOrEqual(2)
    for (const s of statuses) expect(s).toMatchObject({ channel_id: CHANNEL, thread_ts: first!.ts })
    const shown = statuses.map((s) => s.status)
    expect(shown.slice(0, -1).every((s) => /^is (thinking|running search_logs)…$/.test(s))).toBe(
      true,
    )
    expect(shown).toContain('is running search_logs…')
    expect(shown.at(-1)).toBe('')
    // Coalesced: one call per change at most, at least a second apart.
    const calls = world.slack.calls.filter((c) => c.method === 'assistant.threads.setStatus')
    for (let i = 1; i < calls.length; i++)
      expect(calls[i]!.at - calls[i - 1]!.at).toBeGreaterThanOrEqual(1000)
  })

  it('a Slack outage delays the status but never the run, and it still ends cleared', async () => {
    world.model.enqueue(reply.text('Nothing is wrong.'))
    world.slack.failNext('assistant.threads.setStatus', { status: 503 })
    const { runId } = await world.command('is the gateway fine?')
    await world.settle(runId)
    expect((await world.view(runId)).status).toBe('succeeded')
    await world.deliverAll(runId)
    const refused = world.slack.calls.filter((c) => c.status === 503)
    expect(refused.map((c) => c.method)).toEqual(['assistant.threads.setStatus'])
    // The "thinking" status never got through, so there is nothing left to clear either.
    expect(world.slack.statuses.filter((s) => s.status !== '')).toEqual([])
  })
})
