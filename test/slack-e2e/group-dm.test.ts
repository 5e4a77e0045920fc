import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { reply } from '../fakes/fake-openai'
import { eventCallbackBody } from '../fakes/fake-slack'
import { APPROVER, REQUESTER, SlackWorld, messageTs, uniqueConversation, uniqueId } from './harness'

/**
 * Group direct messages (`channel_type: mpim`, `message.mpim`): several people talk to each other
 * there, so edgeloop answers only when mentioned (`app_mention`, which Slack sends in group DMs
 * too) and then in that mention's thread, where a reply continues the conversation, as in a
 * channel. Bots, edgeloop's own posts and retried events start nothing new.
 */
let world: SlackWorld
beforeEach(() => {
  world = new SlackWorld()
})
afterEach(() => world.restore())

const TEAMMATE = 'U0TEAMMATE1'

/** A `message.mpim` event, as Slack sends every message posted in the group DM. */
function groupMessage(
  channel: string,
  input: Omit<Parameters<SlackWorld['message']>[0], 'channel' | 'channel_type'>,
  retryNum?: number,
) {
  return world.message(
    { event_id: uniqueId('Ev'), ts: messageTs(), ...input, channel, channel_type: 'mpim' },
    retryNum,
  )
}

/** What the model was told of the conversation before the task, in its latest request. */
function historySent(): string {
  const messages = world.model.lastBody().messages
  const task = messages.findLastIndex((m) => m.role === 'user')
  return messages
    .slice(0, task)
    .map((m) => String(m.content))
    .join('\n')
}

describe('a group DM with edgeloop', () => {
  it('a mention starts a conversation in its thread; a reply there continues it', async () => {
    const mpim = uniqueConversation('G')
    const at = messageTs()
    world.model.enqueue(reply.text('The gateway is healthy.'))
    const text = '<@UFAKEBOT> check the gateway'
    const first = await world.mention({ text, channel: mpim, ts: at, event_id: uniqueId('Ev') })
    expect(first).toMatchObject({ ok: true, created: true, continues: null })
    // Acknowledged before the model or Slack is asked anything: the run works in its alarm.
    expect(world.model.bodies).toHaveLength(0)
    expect(world.slack.calls).toHaveLength(0)
    // Slack sends the same message as `message.mpim` too: that copy starts no second run.
    const copy = await groupMessage(mpim, { text, ts: at })
    expect(copy).toMatchObject({
      runId: null,
      created: false,
      ignored: 'group DM message outside a thread',
    })

    await world.settle(first.runId!)
    expect(await world.view(first.runId!)).toMatchObject({
      status: 'succeeded',
      task: 'check the gateway',
      requestedBy: `slack:${REQUESTER}`,
      slack: { channel: mpim, threadTs: at },
    })
    const [started, answer] = world.messages(mpim)
    expect(world.messages(mpim)).toHaveLength(2)
    expect([started!.thread_ts, answer!.thread_ts]).toEqual([at, at])
    expect(answer!.text).toContain('The gateway is healthy.')
    expect(world.model.bodies).toHaveLength(1)
    expect(world.slack.ephemerals()).toEqual([])

    // Someone else in the group DM replies in the thread, without a mention: it continues.
    world.model.enqueue(reply.text('Orders are fine.'))
    const followUp = await groupMessage(mpim, {
      text: 'and orders?',
      user: TEAMMATE,
      thread_ts: at,
    })
    expect(followUp).toMatchObject({ ok: true, created: true, continues: first.runId })
    await world.settle(followUp.runId!)
    expect(await world.view(followUp.runId!)).toMatchObject({
      status: 'succeeded',
      requestedBy: `slack:${TEAMMATE}`,
      slack: { channel: mpim, threadTs: at },
      conversation: { id: first.runId, position: 1, previousRunId: first.runId },
    })
    expect(historySent()).toContain('check the gateway')
    expect(historySent()).toContain('The gateway is healthy.')
    expect(world.messages(mpim).at(-1)).toMatchObject({ thread_ts: at })
    expect(world.messages(mpim).at(-1)!.text).toContain('Orders are fine.')
  })

  it("edgeloop's own posts and other bots in its thread start nothing", async () => {
    const mpim = uniqueConversation('G')
    const at = messageTs()
    world.model.enqueue(reply.text('The gateway is healthy.'))
    const first = await world.mention({
      text: '<@UFAKEBOT> check the gateway',
      channel: mpim,
      ts: at,
      event_id: uniqueId('Ev'),
    })
    await world.settle(first.runId!)
    const calls = world.slack.calls.length

    // Slack delivers edgeloop's own answers back as message.mpim events of its bot user.
    for (const posted of world.messages(mpim)) {
      const own = await groupMessage(mpim, {
        text: posted.text ?? '',
        user: 'UFAKEBOT',
        ts: posted.ts,
        thread_ts: at,
        extra: { bot_id: 'B0001', app_id: 'A123456' },
      })
      expect(own).toMatchObject({ runId: null, created: false, ignored: 'message from a bot' })
    }
    const acks = [
      await groupMessage(mpim, {
        text: 'Deploy finished',
        thread_ts: at,
        extra: { bot_id: 'B0CI' },
      }),
      await groupMessage(mpim, {
        text: 'Deploy finished',
        thread_ts: at,
        extra: { subtype: 'bot_message', bot_id: 'B0CI' },
      }),
      await groupMessage(mpim, { text: 'ok', user: 'UFAKEBOT', thread_ts: at }),
    ]
    expect(acks.map((a) => a.ignored)).toEqual([
      'message from a bot',
      'message subtype bot_message',
      "message from this app's bot user",
    ])
    expect(world.slack.calls).toHaveLength(calls)
    expect(world.model.bodies).toHaveLength(1)
  })

  it('a Slack retry of a mention or of a follow-up maps to the same run', async () => {
    const mpim = uniqueConversation('G')
    const at = messageTs()
    world.model.enqueue(reply.text('The gateway is healthy.'), reply.text('Orders are fine.'))
    const mention = {
      text: '<@UFAKEBOT> check the gateway',
      channel: mpim,
      ts: at,
      event_id: uniqueId('Ev'),
    }
    const first = await world.mention(mention)
    const retry = await world.mention(mention, 1)
    await world.settle(first.runId!)
    const late = await world.mention(mention, 2)
    expect([retry, late]).toEqual([
      expect.objectContaining({ runId: first.runId, created: false }),
      expect.objectContaining({ runId: first.runId, created: false }),
    ])

    const input = { text: 'and orders?', thread_ts: at, ts: messageTs(), event_id: uniqueId('Ev') }
    const followUp = await groupMessage(mpim, input)
    const followUpRetry = await groupMessage(mpim, input, 1)
    await world.settle(followUp.runId!)
    expect(followUp).toMatchObject({ created: true, continues: first.runId })
    expect(followUpRetry).toMatchObject({
      runId: followUp.runId,
      created: false,
      continues: first.runId,
    })
    // One model call per run, one answer each in the thread.
    expect(world.model.bodies).toHaveLength(2)
    const answers = world.messages(mpim).filter((m) => /healthy|fine/.test(m.text ?? ''))
    expect(answers.map((m) => [m.thread_ts, m.text?.includes('Orders')])).toEqual([
      [at, false],
      [at, true],
    ])
  })

  it('an approval is asked in the thread and decided by an approver only', async () => {
    const mpim = uniqueConversation('G')
    const at = messageTs()
    const args = { url: 'https://receiver.test/tickets', body: { title: 'gateway slow' } }
    world.model.enqueue(
      reply.toolCalls([{ name: 'http_post', arguments: args }]),
      reply.text('Filed the ticket.'),
    )
    const first = await world.mention({
      text: '<@UFAKEBOT> file a ticket',
      channel: mpim,
      ts: at,
      event_id: uniqueId('Ev'),
    })
    await world.settle(first.runId!)
    expect((await world.view(first.runId!)).status).toBe('awaiting_approval')
    const approval = world.approvalMessage(mpim)
    expect(approval.thread_ts).toBe(at)

    // A follow-up while it waits is not queued; the sender is told privately, in the thread.
    const busy = await groupMessage(mpim, { text: 'and another', user: TEAMMATE, thread_ts: at })
    expect(busy).toMatchObject({ runId: null, busy: first.runId })
    // Being in the group DM does not make one an approver.
    expect((await world.click(approval, 'approve', TEAMMATE)).status).toBe(200)
    expect(world.slack.ephemerals(mpim)).toEqual([
      expect.objectContaining({
        user: TEAMMATE,
        thread_ts: at,
        text: expect.stringContaining('is waiting for an approval'),
      }),
      expect.objectContaining({
        user: TEAMMATE,
        thread_ts: at,
        text: `You can't decide this approval: <@${TEAMMATE}> is not in SLACK_APPROVERS; ask an approver`,
      }),
    ])
    await world.settle(first.runId!)
    expect(world.received).toHaveLength(0)

    expect((await world.click(approval, 'approve', APPROVER)).status).toBe(200)
    await world.settle(first.runId!)
    expect(world.received).toHaveLength(1)
    expect((await world.view(first.runId!)).status).toBe('succeeded')
    const decided = world.messages(mpim).find((m) => m.ts === approval.ts)!
    expect(decided.updates).toBe(1)
    expect(world.messages(mpim).at(-1)).toMatchObject({ thread_ts: at })
    expect(world.messages(mpim).at(-1)!.text).toContain('Filed the ticket.')
  })
})

describe('group DM messages that start nothing', () => {
  const thread = '1700000001.000100'
  it.each<[string, Parameters<typeof groupMessage>[1], string]>([
    [
      'a message to the others (no mention)',
      { text: 'lunch at noon?' },
      'group DM message outside a thread',
    ],
    [
      'a reply in a thread edgeloop never answered in',
      { text: 'sounds good', thread_ts: messageTs() },
      'not a thread of an edgeloop run',
    ],
    [
      'the message copy of a mention in a thread (the app_mention answers it)',
      { text: '<@UFAKEBOT> and payments?', thread_ts: thread },
      'message mentions the app (app_mention answers)',
    ],
    ['a bot message', { text: 'Deploy finished', extra: { bot_id: 'B0CI' } }, 'message from a bot'],
    [
      "this app's own message",
      { text: 'Working on it', user: 'UFAKEBOT', thread_ts: thread },
      "message from this app's bot user",
    ],
    [
      'an edit',
      { thread_ts: thread, extra: { subtype: 'message_changed', hidden: true } },
      'message subtype message_changed',
    ],
  ])('%s: 200, nothing posted, no model call', async (_name, input, reason) => {
    const ack = await groupMessage(uniqueConversation('G'), input)
    expect(ack).toMatchObject({ ok: true, runId: null, created: false, ignored: reason })
    expect(world.slack.calls).toEqual([])
    expect(world.model.bodies).toEqual([])
  })

  it.each([
    ['an app_mention from a bot', { bot_id: 'B0CI' }, 'app_mention from a bot'],
    ['an app_mention by this app', { user: 'UFAKEBOT' }, "app_mention from this app's bot user"],
  ])('%s', async (_name, extra, reason) => {
    const body = JSON.parse(
      eventCallbackBody({
        text: '<@UFAKEBOT> hi',
        channel: uniqueConversation('G'),
        event_id: uniqueId('Ev'),
      }),
    )
    Object.assign(body.event, extra)
    const res = await world.post('/slack/events', JSON.stringify(body))
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({ ok: true, runId: null, ignored: reason })
    expect(world.slack.calls).toEqual([])
    expect(world.model.bodies).toEqual([])
  })
})
