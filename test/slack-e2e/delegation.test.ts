/**
 * A child of a Slack-started run (docs/agents.md#delegation): its approval card goes to the
 * parent's thread, naming both agents, and a click there decides it; the child posts nothing
 * else, and the parent finishes with the child's answer.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { reply } from '../fakes/fake-openai'
import { APPROVER, SlackWorld, blockText } from './harness'

const ARGS = { url: 'https://receiver.test/status', body: { up: false } }

let world: SlackWorld
beforeEach(() => {
  world = new SlackWorld()
})
afterEach(() => world.restore())

describe('delegation from Slack', () => {
  it("the child's approval card is posted in the parent's thread and decided by a click", async () => {
    world.model.enqueue(
      reply.toolCalls([
        { id: 'call_d', name: 'ask_default', arguments: { task: 'Post the status: down' } },
      ]),
    )
    const { runId } = await world.command('lead: the status page must say we are down')
    await world.settle(runId)
    const parent = await world.view(runId)
    expect(parent.phase).toBe('await_child')
    const child = parent.children[0]!.runId
    const [started] = world.messages()
    expect(started!.text).toContain(runId)

    world.model.enqueue(reply.toolCalls([{ name: 'http_post', arguments: ARGS }]))
    await world.settle(child)
    expect((await world.view(child)).status).toBe('awaiting_approval')
    // One card, in the parent's thread, naming the child's agent and the one that delegated.
    const approval = world.approvalMessage()
    expect(approval.thread_ts).toBe(started!.ts)
    const text = blockText(approval)
    expect(text).toContain('*Agent:* `default`')
    expect(text).toContain(`*Delegated by:* \`lead\` (run \`${runId}\`)`)
    expect(world.messages()).toHaveLength(2)

    expect((await world.click(approval, 'approve', APPROVER)).status).toBe(200)
    world.model.enqueue(reply.text('Posted: down.'))
    await world.settle(child)
    expect(world.received).toHaveLength(1)
    expect((await world.view(child)).status).toBe('succeeded')
    world.model.enqueue(reply.text('The status page says we are down.'))
    await world.settle(runId)
    const done = await world.deliverAll(runId)
    expect(done.status).toBe('succeeded')
    expect(done.result.steps[0]!.calls[0]!.observation).toBe('Posted: down.')
    // The card shows the decision; the child posted nothing else (no started or final message).
    const texts = world.messages().map((m) => m.text ?? '')
    expect(texts.filter((t) => t.includes(child))).toEqual([])
    expect(texts.at(-1)).toContain('The status page says we are down.')
  })
})
