import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { reply } from '../fakes/fake-openai'
import type { SlackFailure } from '../fakes/fake-slack'
import { APPROVER, SlackWorld, blockText } from './harness'

let world: SlackWorld
beforeEach(() => {
  world = new SlackWorld()
})
afterEach(() => world.restore())

/** Drives the run's alarms (moving the clock) until no delivery is pending. */
async function deliverAll(runId: string, maxAlarms = 40) {
  for (let i = 0; i < maxAlarms; i++) {
    const view = await world.view(runId)
    if (!view.deliveries.some((d) => d.status === 'pending')) return view
    await world.nextAlarm(runId)
  }
  throw new Error(`run ${runId} still has pending deliveries after ${maxAlarms} alarms`)
}

describe('Slack failing, then recovering', () => {
  it.each<[string, SlackFailure, RegExp, number | undefined]>([
    [
      'a 500',
      { status: 500 },
      /^Slack chat\.postMessage failed: http_500 \(try again later\)$/,
      undefined,
    ],
    [
      'a 429 with Retry-After',
      { status: 429, retryAfter: 7 },
      /rate limited; Slack asked for 7 s/,
      7_000,
    ],
    [
      'a network error',
      { network: true },
      /network error: fake Slack: network connection lost/,
      undefined,
    ],
    [
      'an ok:false transient error',
      { error: 'service_unavailable' },
      /service_unavailable/,
      undefined,
    ],
  ])(
    'the run goes on after %s, and the delivery is retried and visible',
    async (_n, failure, error, retryAfter) => {
      world.slack.failNext('chat.postMessage', failure)
      world.model.enqueue(reply.text('The gateway is healthy.'))
      const { runId } = await world.command('check the gateway')

      await world.settle(runId)
      let view = await world.view(runId)
      // The run finished although Slack never got the first message.
      expect(view.status).toBe('succeeded')
      expect(world.model.bodies).toHaveLength(1)
      expect(world.messages()).toEqual([])
      const started = view.deliveries.find((d) => d.id === 'slack.started')!
      expect(started).toMatchObject({ status: 'pending', attempts: 1 })
      expect(started.lastError).toMatch(error)
      if (retryAfter !== undefined)
        expect(Date.parse(started.nextAt) - Date.parse(started.updatedAt)).toBe(retryAfter)
      else expect(Date.parse(started.nextAt)).toBeGreaterThan(Date.now())
      // The final answer waits for the thread it belongs in instead of posting outside it.
      const final = view.deliveries.find((d) => d.id === 'slack.final')!
      expect(final.status).toBe('pending')

      view = await deliverAll(runId)
      expect(view.deliveries.find((d) => d.id === 'slack.started')).toMatchObject({
        status: 'delivered',
        attempts: 2,
      })
      expect(view.deliveries.find((d) => d.id === 'slack.started')!.lastError).toBeUndefined()
      const [first, answer] = world.messages()
      expect(world.messages()).toHaveLength(2)
      // The first message, posted late, then shows how the run ended (live progress).
      expect(first!.text).toMatch(/^:white_check_mark: Done \(run `run_\w+`\): check the gateway\n/)
      expect(answer).toMatchObject({ thread_ts: first!.ts })
      expect(answer!.text).toContain('The gateway is healthy.')
      expect(world.model.bodies).toHaveLength(1)
    },
  )

  it('keeps the final answer for the thread through a long outage of the first message', async () => {
    for (let i = 0; i < 5; i++) world.slack.failNext('chat.postMessage', { status: 503 })
    world.model.enqueue(reply.text('The gateway is healthy.'))
    const { runId } = await world.command('check the gateway')
    await world.settle(runId)

    const view = await deliverAll(runId)
    expect(view.deliveries.find((d) => d.id === 'slack.started')).toMatchObject({
      status: 'delivered',
      attempts: 6,
    })
    const final = view.deliveries.find((d) => d.id === 'slack.final')!
    expect(final.status).toBe('delivered')
    // It waited in step with the first message's backoff, not on a clock of its own.
    expect(final.attempts).toBeLessThanOrEqual(6)
    expect(world.messages()).toHaveLength(2)
    const [first, answer] = world.messages()
    expect(answer).toMatchObject({ thread_ts: first!.ts })
    expect(answer!.text).toContain('The gateway is healthy.')
  })

  it('gives up at once on a permanent Slack error and still finishes the run', async () => {
    world.slack.failNext('chat.postMessage', { error: 'channel_not_found' })
    world.model.enqueue(reply.text('The gateway is healthy.'))
    const { runId } = await world.command('check the gateway')
    await world.settle(runId)

    const view = await world.view(runId)
    expect(view.status).toBe('succeeded')
    const started = view.deliveries.find((d) => d.id === 'slack.started')!
    expect(started).toMatchObject({ status: 'failed', attempts: 1 })
    expect(started.lastError).toContain('channel_not_found (invite the bot to the channel)')
  })

  it('runs an approved tool while the button update is rate limited, then updates the message', async () => {
    world.model.enqueue(
      reply.toolCalls([
        {
          name: 'http_post',
          arguments: { url: 'https://receiver.test/tickets', body: { title: 'INC' } },
        },
      ]),
      reply.text('Filed the ticket.'),
    )
    const { runId } = await world.command('file a ticket for the outage')
    await world.settle(runId)
    const approval = world.approvalMessage()
    world.slack.failNext('chat.update', { status: 429, retryAfter: 3 })

    await world.click(approval, 'approve', APPROVER)
    await world.settle(runId)
    let view = await world.view(runId)
    expect(view.status).toBe('succeeded')
    expect(world.received).toHaveLength(1)
    expect(world.messages().at(-1)!.text).toContain('Filed the ticket.')
    const decision = view.deliveries.find((d) => d.id.startsWith('slack.decision:'))!
    expect(decision).toMatchObject({ status: 'pending', attempts: 1 })
    expect(Date.parse(decision.nextAt) - Date.parse(decision.updatedAt)).toBe(3_000)

    view = await deliverAll(runId)
    const updated = world.messages().find((m) => m.ts === approval.ts)!
    expect(blockText(updated)).toContain(`Approved by <@${APPROVER}>`)
    expect(world.received).toHaveLength(1)
  })
})

describe('the final message of a failed run', () => {
  it.each([
    [
      'the model rejects the request',
      reply.error(400, 'Invalid value for tools', {}, { code: 'invalid_value' }),
      'provider answered 400 invalid_value: Invalid value for tools',
    ],
    [
      'the model key is wrong',
      reply.error(401, 'Incorrect API key provided'),
      'provider answered 401: Incorrect API key provided (check OPENAI_API_KEY)',
    ],
  ])('says it failed and why when %s', async (_n, failure, why) => {
    world.model.enqueue(failure)
    const { runId } = await world.command('check the gateway')
    await world.settle(runId)

    const view = await world.view(runId)
    expect(view.status).toBe('failed')
    expect(view.result.answer).toBe('')
    const final = world.messages().at(-1)!
    expect(final.thread_ts).toBe(world.messages()[0]!.ts)
    expect(final.text).toMatch(/^:x: Run failed — stopped: `model_error` after 0 steps/)
    expect(final.text).toContain(
      `*Why:* ModelError: model call to api.openai.test/gpt-test failed: ${why}`,
    )
    expect(final.text).not.toContain('Done in')
    expect(final.text).not.toContain('sk-test')
  })
})
