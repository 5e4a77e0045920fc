import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { reply } from '../fakes/fake-openai'
import { urlVerificationBody } from '../fakes/fake-slack'
import { CHANNEL, REQUESTER, SlackWorld, uniqueId } from './harness'

let world: SlackWorld
beforeEach(() => {
  world = new SlackWorld()
})
afterEach(() => world.restore())

describe('POST /slack/events', () => {
  it('answers the url_verification challenge', async () => {
    const res = await world.post(
      '/slack/events',
      urlVerificationBody('3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P'),
    )
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({
      challenge: '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P',
    })
    expect(world.slack.calls).toHaveLength(0)
  })

  it.each([
    ['in a channel: the reply thread is the mention itself', undefined],
    ['in a thread: the run answers in that thread', '1700000050.000100'],
  ])('starts a run from an app_mention %s', async (_name, threadTs) => {
    const ts = `${Math.floor(Date.now() / 1000)}.000200`
    world.model.enqueue(reply.text('The order service error rate is back to normal.'))
    const ack = await world.mention({
      text: '<@UFAKEBOT> how is the order service doing?',
      ts,
      event_id: uniqueId('Ev'),
      ...(threadTs ? { thread_ts: threadTs } : {}),
    })
    expect(ack).toMatchObject({ ok: true, created: true })
    expect(ack.runId).toMatch(/^run_[0-9a-f]{32}$/)
    expect(world.model.bodies).toHaveLength(0)

    await world.settle(ack.runId!)
    const view = await world.view(ack.runId!)
    expect(view).toMatchObject({
      task: 'how is the order service doing?',
      requestedBy: `slack:${REQUESTER}`,
      status: 'succeeded',
    })
    const thread = threadTs ?? ts
    const [started, final] = world.messages()
    expect(world.messages()).toHaveLength(2)
    expect(started).toMatchObject({ thread_ts: thread })
    expect(started!.text).toContain(ack.runId!)
    expect(final).toMatchObject({ thread_ts: thread })
    expect(final!.text).toContain('The order service error rate is back to normal.')
  })

  it('maps a Slack retry of the same event to the same run and calls the model once', async () => {
    const eventId = uniqueId('Ev')
    const event = { text: '<@UFAKEBOT> check the gateway', event_id: eventId }
    world.model.enqueue(reply.text('The gateway is healthy.'))

    const first = await world.mention(event)
    // Slack retries while the first delivery is still being worked on, and again after.
    const retry = await world.mention(event, 1)
    await world.settle(first.runId!)
    const late = await world.mention(event, 2)
    await world.settle(first.runId!)

    expect(first.created).toBe(true)
    expect([retry, late]).toEqual([
      expect.objectContaining({ runId: first.runId, created: false }),
      expect.objectContaining({ runId: first.runId, created: false }),
    ])
    expect(world.model.bodies).toHaveLength(1)
    expect(world.messages().map((m) => m.text)).toEqual([
      expect.stringMatching(/^:white_check_mark: Done .*\ndone in 1 step/),
      expect.stringContaining('The gateway is healthy.'),
    ])
  })

  it.each([
    ['an event from a bot', { bot_id: 'B0BOT' }],
    ['a mention with no task', { text: '<@UFAKEBOT>   ' }],
  ])('acknowledges %s without starting a run', async (_name, extra) => {
    const ack = await world.mention({
      text: '<@UFAKEBOT> do something',
      event_id: uniqueId('Ev'),
      ...extra,
    })
    expect(ack.ok).toBe(true)
    expect(ack.runId ?? null).toBeNull()
    expect(world.slack.calls).toHaveLength(0)
    expect(world.model.bodies).toHaveLength(0)
  })
})

describe('POST /slack/commands', () => {
  it('answers an empty command with its usage and starts nothing', async () => {
    const res = await world.post(
      '/slack/commands',
      new URLSearchParams({
        command: '/agent',
        text: '  ',
        user_id: REQUESTER,
        channel_id: CHANNEL,
        team_id: 'T0001',
        response_url: 'https://hooks.slack.test/commands/1/2',
        trigger_id: uniqueId('1.'),
      }).toString(),
    )
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({
      response_type: 'ephemeral',
      text: expect.stringContaining('Usage: /agent <task>'),
    })
    expect(world.slack.calls).toHaveLength(0)
  })

  it('maps a repeated trigger_id to the same run', async () => {
    world.model.enqueue(reply.text('done'))
    const trigger = uniqueId('13345224609.')
    const first = await world.command('check the gateway', { trigger_id: trigger })
    const again = await world.command('check the gateway', { trigger_id: trigger })
    expect(again.runId).toBe(first.runId)
    await world.settle(first.runId)
    expect(world.model.bodies).toHaveLength(1)
    expect(world.slack.succeeded('chat.postMessage')).toHaveLength(2)
  })
})
