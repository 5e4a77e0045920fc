import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { reply } from '../fakes/fake-openai'
import { eventCallbackBody } from '../fakes/fake-slack'
import {
  APPROVER,
  CHANNEL,
  REQUESTER,
  SlackWorld,
  messageTs,
  uniqueConversation,
  uniqueId,
} from './harness'

/**
 * Conversations in Slack: the thread is the conversation, a direct message starts or
 * continues one, and nothing the bot or an edit posts starts anything.
 */
let world: SlackWorld
beforeEach(() => {
  world = new SlackWorld()
})
afterEach(() => world.restore())

const DM = 'D0DIRECT01'

/** What the model was told of the conversation before the task, in its latest request. */
function historySent(): string {
  const messages = world.model.lastBody().messages
  const task = messages.findLastIndex((m) => m.role === 'user')
  return messages
    .slice(0, task)
    .map((m) => String(m.content))
    .join('\n')
}

async function finishedMention(text = '<@UFAKEBOT> check the gateway') {
  const at = messageTs()
  world.model.enqueue(reply.text('The gateway is healthy.'))
  const ack = await world.mention({ text, ts: at, event_id: uniqueId('Ev') })
  expect(ack.created).toBe(true)
  await world.settle(ack.runId!)
  expect((await world.view(ack.runId!)).status).toBe('succeeded')
  return { runId: ack.runId!, thread: at }
}

describe('messages that start nothing', () => {
  const thread = '1700000001.000100'
  it.each<[string, Parameters<SlackWorld['message']>[0], string]>([
    [
      'a bot message',
      { text: 'hi', thread_ts: thread, extra: { bot_id: 'B0OTHER' } },
      'from a bot',
    ],
    [
      'a bot_message subtype',
      { text: 'hi', thread_ts: thread, extra: { subtype: 'bot_message', bot_id: 'B0OTHER' } },
      'message subtype bot_message',
    ],
    [
      "this app's own message",
      { text: 'Working on it', user: 'UFAKEBOT', thread_ts: thread },
      "from this app's bot user",
    ],
    [
      'an edit',
      {
        thread_ts: thread,
        extra: {
          subtype: 'message_changed',
          hidden: true,
          message: {
            type: 'message',
            user: REQUESTER,
            text: 'check the gateway again',
            ts: thread,
          },
          previous_message: {
            type: 'message',
            user: REQUESTER,
            text: 'check the gateway',
            ts: thread,
          },
        },
      },
      'message subtype message_changed',
    ],
    [
      'a deletion',
      {
        thread_ts: thread,
        extra: { subtype: 'message_deleted', hidden: true, deleted_ts: thread },
      },
      'message subtype message_deleted',
    ],
    [
      'a channel join',
      { text: '<@U1> has joined', extra: { subtype: 'channel_join', user: 'U1' } },
      'message subtype channel_join',
    ],
    [
      'an edit in a DM',
      { channel: DM, channel_type: 'im', extra: { subtype: 'message_changed', hidden: true } },
      'message subtype message_changed',
    ],
    [
      'a bot in a DM',
      { text: 'ping', channel: DM, channel_type: 'im', extra: { bot_id: 'B0OTHER' } },
      'from a bot',
    ],
    [
      'a channel message outside a thread',
      { text: 'the gateway is slow' },
      'channel message outside a thread',
    ],
    [
      'a thread reply mentioning the app (the app_mention answers it)',
      { text: '<@UFAKEBOT> and the order service?', thread_ts: thread },
      'message mentions the app (app_mention answers)',
    ],
  ])('%s', async (_name, input, reason) => {
    const ack = await world.message({ event_id: uniqueId('Ev'), ts: messageTs(), ...input })
    expect(ack).toMatchObject({ ok: true, runId: null, created: false })
    expect(ack.ignored).toContain(reason)
    expect(world.slack.calls).toEqual([])
    expect(world.model.bodies).toEqual([])
  })

  it.each([
    ['an app_mention from a bot', { bot_id: 'B0OTHER' }, 'app_mention from a bot'],
    ['an app_mention by this app', { user: 'UFAKEBOT' }, "app_mention from this app's bot user"],
  ])('%s', async (_name, extra, reason) => {
    const body = JSON.parse(eventCallbackBody({ text: '<@UFAKEBOT> hi', event_id: uniqueId('Ev') }))
    Object.assign(body.event, extra)
    const res = await world.post('/slack/events', JSON.stringify(body))
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({ ok: true, runId: null, ignored: reason })
    expect(world.slack.calls).toEqual([])
  })

  it('a reply in a thread edgeloop never answered in', async () => {
    const ack = await world.message({
      text: 'what about it?',
      thread_ts: messageTs(),
      ts: messageTs(),
      event_id: uniqueId('Ev'),
    })
    expect(ack).toMatchObject({ runId: null, ignored: 'not a thread of an edgeloop run' })
    expect(world.slack.calls).toEqual([])
  })
})

describe('the thread is the conversation', () => {
  it('a mention and its reply that name no workspace start and continue nothing', async () => {
    // Were they answered, a thread of no workspace would be one every workspace could reply in.
    const thread = messageTs()
    const mention = await world.mention({
      text: '<@UFAKEBOT> check the gateway',
      ts: thread,
      event_id: uniqueId('Ev'),
      team_id: null,
    })
    expect(mention).toMatchObject({ ok: true, runId: null, ignored: 'app_mention without team_id' })
    const reply = await world.message({
      text: 'and the order service?',
      thread_ts: thread,
      ts: messageTs(),
      event_id: uniqueId('Ev'),
      team_id: null,
    })
    expect(reply).toMatchObject({ ok: true, runId: null, ignored: 'message without team_id' })
    expect(world.model.bodies).toHaveLength(0)
  })

  it.each([
    ['names no workspace', null],
    ['comes from another workspace', 'T0002'],
  ])('a signed reply that %s does not continue the thread', async (_name, team) => {
    const first = await finishedMention()
    const ack = await world.message({
      text: 'and the order service?',
      thread_ts: first.thread,
      ts: messageTs(),
      event_id: uniqueId('Ev'),
      team_id: team,
    })
    expect(ack).toMatchObject({ ok: true, runId: null, created: false })
    expect(ack).toHaveProperty('ignored')
    expect(world.model.bodies).toHaveLength(1)
  })

  it('a reply in the thread of a mention-started run continues it, in that thread', async () => {
    const first = await finishedMention()
    world.model.enqueue(reply.text('The order service is healthy too.'))
    const ack = await world.message({
      text: 'and the order service?',
      thread_ts: first.thread,
      ts: messageTs(),
      event_id: uniqueId('Ev'),
    })
    expect(ack).toMatchObject({ ok: true, created: true, continues: first.runId })
    expect(ack.runId).not.toBe(first.runId)
    await world.settle(ack.runId!)
    const view = await world.view(ack.runId!)
    expect(view.status).toBe('succeeded')
    expect(view.slack).toMatchObject({ channel: CHANNEL, threadTs: first.thread })
    // The follow-up knows the first run: its task and answer come before the new task.
    expect(view).toMatchObject({
      task: 'and the order service?',
      conversation: { id: first.runId, position: 1, previousRunId: first.runId },
    })
    expect(historySent()).toContain('Earlier in this conversation')
    expect(historySent()).toContain('check the gateway')
    expect(historySent()).toContain('The gateway is healthy.')
    // Both runs answered in the one thread.
    const answers = world.messages().filter((m) => m.text?.includes('healthy'))
    expect(answers.map((m) => m.thread_ts)).toEqual([first.thread, first.thread])

    // A mention in the thread continues the latest run of the thread.
    world.model.enqueue(reply.text('Payments too.'))
    const third = await world.mention({
      text: '<@UFAKEBOT> and payments?',
      thread_ts: first.thread,
      ts: messageTs(),
      event_id: uniqueId('Ev'),
    })
    expect(third).toMatchObject({ created: true, continues: ack.runId })
    await world.settle(third.runId!)
    expect((await world.view(third.runId!)).conversation).toMatchObject({
      id: first.runId,
      position: 2,
      previousRunId: ack.runId,
    })
    expect(historySent()).toContain('The order service is healthy too.')
    expect(historySent()).toContain('The gateway is healthy.')
  })

  it('a reply in the thread of a slash-command run continues it', async () => {
    world.model.enqueue(reply.text('The gateway is healthy.'))
    const { runId } = await world.command('check the gateway')
    await world.settle(runId)
    const thread = world.messages()[0]!.ts
    expect((await world.view(runId)).deliveries.find((d) => d.id === 'slack.thread')).toMatchObject(
      {
        status: 'delivered',
      },
    )

    world.model.enqueue(reply.text('The order service is healthy too.'))
    const ack = await world.message({
      text: 'and the order service?',
      thread_ts: thread,
      ts: messageTs(),
      event_id: uniqueId('Ev'),
    })
    expect(ack).toMatchObject({ created: true, continues: runId })
    await world.settle(ack.runId!)
    expect(world.messages().at(-1)).toMatchObject({ thread_ts: thread })
    expect(historySent()).toContain('The gateway is healthy.')
    expect((await world.view(ack.runId!)).conversation).toMatchObject({ previousRunId: runId })
  })

  it('a follow-up while the previous run still works starts nothing and says so privately', async () => {
    world.model.enqueue(
      reply.toolCalls([
        { name: 'http_post', arguments: { url: 'https://receiver.test/t', body: {} } },
      ]),
      reply.text('Filed.'),
    )
    const at = messageTs()
    const first = await world.mention({
      text: '<@UFAKEBOT> file a ticket',
      ts: at,
      event_id: uniqueId('Ev'),
    })
    await world.settle(first.runId!)
    expect((await world.view(first.runId!)).status).toBe('awaiting_approval')

    const busy = await world.message({
      text: 'and another one',
      thread_ts: at,
      ts: messageTs(),
      event_id: uniqueId('Ev'),
    })
    expect(busy).toMatchObject({ runId: null, created: false, busy: first.runId })
    expect(world.slack.ephemerals(CHANNEL)).toEqual([
      expect.objectContaining({
        user: REQUESTER,
        thread_ts: at,
        text: expect.stringContaining(`(run \`${first.runId}\`) is waiting for an approval`),
      }),
    ])
    expect(world.model.bodies).toHaveLength(1)

    // Once it has answered, the same kind of message continues it.
    await world.click(world.approvalMessage(), 'approve', APPROVER)
    await world.settle(first.runId!)
    expect((await world.view(first.runId!)).status).toBe('succeeded')
    world.model.enqueue(reply.text('Filed another.'))
    const next = await world.message({
      text: 'and another one',
      thread_ts: at,
      ts: messageTs(),
      event_id: uniqueId('Ev'),
    })
    expect(next).toMatchObject({ created: true, continues: first.runId })
    await world.settle(next.runId!)
    expect(historySent()).toContain('Filed.')
    // Approvals stay per run: the follow-up inherited none.
    expect((await world.view(next.runId!)).pendingApprovals).toEqual([])
  })

  it('two follow-ups at once: one continues the run, the other is told it is busy', async () => {
    const first = await finishedMention()
    world.model.enqueue(reply.text('Orders are fine.'))
    const acks = await Promise.all(
      ['and orders?', 'and payments?'].map((text) =>
        world.message({ text, thread_ts: first.thread, ts: messageTs(), event_id: uniqueId('Ev') }),
      ),
    )
    const started = acks.filter((a) => a.created)
    const busy = acks.filter((a) => a.busy)
    expect(started).toHaveLength(1)
    expect(started[0]).toMatchObject({ continues: first.runId })
    // The other one found the new run (not the finished first) as the thread's latest.
    expect(busy).toEqual([expect.objectContaining({ runId: null, busy: started[0]!.runId })])
    expect(world.slack.ephemerals(CHANNEL)).toHaveLength(1)
    await world.settle(started[0]!.runId!)
    expect(world.model.bodies).toHaveLength(2)
  })

  it('a Slack retry of a follow-up maps to the same run', async () => {
    const first = await finishedMention()
    world.model.enqueue(reply.text('Again healthy.'))
    const input = {
      text: 'and now?',
      thread_ts: first.thread,
      ts: messageTs(),
      event_id: uniqueId('Ev'),
    }
    const ack = await world.message(input)
    const retry = await world.message(input, 1)
    await world.settle(ack.runId!)
    const late = await world.message(input, 2)
    expect(retry).toMatchObject({ runId: ack.runId, created: false, continues: first.runId })
    expect(late).toMatchObject({ runId: ack.runId, created: false, continues: first.runId })
    // The first run's one model call and the follow-up's one.
    expect(world.model.bodies).toHaveLength(2)
  })
})

describe('direct messages', () => {
  it('a DM starts a conversation; a reply in its thread and a DM soon after continue it', async () => {
    const DM = uniqueConversation('D')
    world.model.enqueue(reply.text('The gateway is healthy.'))
    const at = messageTs()
    const first = await world.message({
      text: 'check the gateway',
      channel: DM,
      channel_type: 'im',
      ts: at,
      event_id: uniqueId('Ev'),
    })
    expect(first).toMatchObject({ created: true, continues: null })
    await world.settle(first.runId!)
    const answer = world.messages(DM).at(-1)!
    expect(answer).toMatchObject({ thread_ts: at })
    expect(answer.text).toContain('The gateway is healthy.')

    world.model.enqueue(reply.text('Orders are fine.'))
    const inThread = await world.message({
      text: 'and orders?',
      channel: DM,
      channel_type: 'im',
      thread_ts: at,
      ts: messageTs(),
      event_id: uniqueId('Ev'),
    })
    expect(inThread).toMatchObject({ created: true, continues: first.runId })
    await world.settle(inThread.runId!)
    expect(historySent()).toContain('The gateway is healthy.')
    expect(world.messages(DM).at(-1)).toMatchObject({ thread_ts: at })

    world.advance(10 * 60_000)
    world.model.enqueue(reply.text('Payments are fine.'))
    const topLevel = await world.message({
      text: 'and payments?',
      channel: DM,
      channel_type: 'im',
      ts: messageTs(),
      event_id: uniqueId('Ev'),
    })
    expect(topLevel).toMatchObject({ created: true, continues: inThread.runId })
    await world.settle(topLevel.runId!)
    expect(historySent()).toContain('Orders are fine.')
    expect(historySent()).toContain('The gateway is healthy.')
    expect((await world.view(topLevel.runId!)).conversation).toMatchObject({
      id: first.runId,
      position: 2,
    })
  })

  it('a DM long after the last run starts a new conversation', async () => {
    const dm = uniqueConversation('D')
    world.model.enqueue(reply.text('Healthy.'))
    const first = await world.message({
      text: 'check the gateway',
      channel: dm,
      channel_type: 'im',
      ts: messageTs(),
      event_id: uniqueId('Ev'),
    })
    await world.settle(first.runId!)
    world.advance(61 * 60_000)
    world.model.enqueue(reply.text('Healthy.'))
    const later = await world.message({
      text: 'check the gateway',
      channel: dm,
      channel_type: 'im',
      ts: messageTs(),
      event_id: uniqueId('Ev'),
    })
    expect(later).toMatchObject({ created: true, continues: null })
    await world.settle(later.runId!)
    expect(historySent()).not.toContain('Earlier in this conversation')
    expect((await world.view(later.runId!)).conversation).toMatchObject({
      id: later.runId,
      position: 0,
    })
  })
})
