import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { SlackApiError } from '../../src/slack/slack-api-error'
import { SlackClient } from '../../src/slack/web-api'
import { FakeSlack, type SlackFailure } from '../fakes/fake-slack'
import { Outbound } from '../fakes/outbound'

const TOKEN = 'xoxb-test-token-123'
const BASE_URL = 'https://slack.test/api'

let outbound: Outbound
let slack: FakeSlack
let sleeps: number[]

beforeEach(() => {
  slack = new FakeSlack({ token: TOKEN, channels: ['C1', 'C2'] })
  sleeps = []
})
afterEach(() => outbound.restore())

/** A client built BEFORE the fake is installed, so a captured fetch would miss it. */
function client(options: { token?: string; maxRetries?: number } = {}): SlackClient {
  const c = new SlackClient({
    token: options.token ?? TOKEN,
    baseUrl: BASE_URL,
    maxRetries: options.maxRetries,
    sleep: async (ms) => {
      sleeps.push(ms)
    },
  })
  outbound = new Outbound().on('slack.test', slack.handler).install()
  return c
}

async function failure(promise: Promise<unknown>): Promise<SlackApiError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(err).toBeInstanceOf(SlackApiError)
  const apiError = err as SlackApiError
  expect(apiError.message).not.toContain(TOKEN)
  expect(JSON.stringify(apiError.details)).not.toContain(TOKEN)
  return apiError
}

describe('SlackClient', () => {
  it('posts a message as JSON with the bearer token and returns channel and ts', async () => {
    const c = client()
    const blocks = [{ type: 'section', text: { type: 'mrkdwn', text: 'hi' } }]
    const res = await c.postMessage({ channel: 'C1', text: 'hi', blocks, thread_ts: '1.2' })
    expect(res).toMatchObject({ ok: true, channel: 'C1', ts: '1700000000.000001' })
    const [req] = outbound.to('slack.test')
    expect(req).toMatchObject({
      method: 'POST',
      url: 'https://slack.test/api/chat.postMessage',
      headers: {
        authorization: `Bearer ${TOKEN}`,
        'content-type': 'application/json; charset=utf-8',
      },
    })
    expect(JSON.parse(req!.body)).toEqual({ channel: 'C1', text: 'hi', blocks, thread_ts: '1.2' })
    expect(slack.messages('C1')).toMatchObject([
      { text: 'hi', blocks, thread_ts: '1.2', updates: 0 },
    ])
    expect(sleeps).toEqual([])
  })

  it('updates a posted message', async () => {
    const c = client()
    const { ts } = await c.postMessage({ channel: 'C2', text: 'before' })
    const res = await c.update({ channel: 'C2', ts, text: 'after', blocks: [] })
    expect(res).toMatchObject({ ok: true, channel: 'C2', ts })
    expect(slack.messages('C2')).toMatchObject([{ ts, text: 'after', updates: 1 }])
  })

  it('posts an ephemeral message', async () => {
    const c = client()
    const res = await c.postEphemeral({ channel: 'C1', user: 'U1', text: 'only you' })
    expect(res).toMatchObject({ ok: true, message_ts: expect.any(String) })
    expect(slack.ephemerals('C1')).toMatchObject([{ user: 'U1', text: 'only you' }])
  })

  it('calls fetch late, so a fake installed after construction is reached', async () => {
    const c = client()
    await c.postMessage({ channel: 'C1', text: 'late' })
    expect(outbound.to('slack.test')).toHaveLength(1)
  })

  it.each([
    [
      'channel_not_found',
      () => client().postMessage({ channel: 'C404', text: 'x' }),
      /invite the bot/,
    ],
    [
      'invalid_auth',
      () => client({ token: 'xoxb-wrong' }).postMessage({ channel: 'C1', text: 'x' }),
      /SLACK_BOT_TOKEN/,
    ],
    [
      'message_not_found',
      () => client().update({ channel: 'C1', ts: '9.9', text: 'x' }),
      /not retryable/,
    ],
  ])(
    'throws a non-retryable SlackApiError on ok:false %s, without retrying',
    async (code, call, hint) => {
      const err = await failure(call())
      expect(err.details).toMatchObject({ code, retryable: false })
      expect(err.details.method).toMatch(/^chat\./)
      expect(err.message).toContain(code)
      expect(err.message).toMatch(hint)
      expect(outbound.to('slack.test')).toHaveLength(1)
      expect(sleeps).toEqual([])
    },
  )

  it('marks an ok:false ratelimited reply retryable', async () => {
    const c = client()
    slack.failNext('chat.postMessage', { error: 'ratelimited' })
    const err = await failure(c.postMessage({ channel: 'C1', text: 'x' }))
    expect(err.details).toMatchObject({
      method: 'chat.postMessage',
      code: 'ratelimited',
      retryable: true,
    })
  })

  it.each<[string, SlackFailure, number[]]>([
    ['429 with Retry-After: 1', { status: 429, retryAfter: 1 }, [1000]],
    ['429 with Retry-After: 0', { status: 429, retryAfter: 0 }, [0]],
    ['500', { status: 500 }, [500]],
    ['503', { status: 503 }, [500]],
    ['a network error', { network: true }, [500]],
  ])('retries after %s and then succeeds', async (_name, fail, expectedSleeps) => {
    const c = client()
    slack.failNext('chat.postMessage', fail)
    const res = await c.postMessage({ channel: 'C1', text: 'x' })
    expect(res.ts).toBeTruthy()
    expect(sleeps).toEqual(expectedSleeps)
    expect(outbound.to('slack.test')).toHaveLength(2)
    expect(slack.messages('C1')).toHaveLength(1)
  })

  it.each<[string, SlackFailure, string, number[]]>([
    ['500', { status: 500 }, 'http_500', [500, 1000]],
    ['a network error', { network: true }, 'network', [500, 1000]],
    ['429 with Retry-After: 1', { status: 429, retryAfter: 1 }, 'ratelimited', [1000, 1000]],
  ])(
    'gives up after repeated %s with a retryable error',
    async (_name, fail, code, expectedSleeps) => {
      const c = client()
      slack
        .failNext('chat.update', fail)
        .failNext('chat.update', fail)
        .failNext('chat.update', fail)
      const err = await failure(c.update({ channel: 'C1', ts: '1.1', text: 'x' }))
      expect(err.details).toMatchObject({ method: 'chat.update', code, retryable: true })
      expect(sleeps).toEqual(expectedSleeps)
      expect(outbound.to('slack.test')).toHaveLength(3)
    },
  )

  it.each<[string, SlackFailure, number | undefined]>([
    ['a Retry-After above the bound', { status: 429, retryAfter: 120 }, 120],
    ['no Retry-After', { status: 429 }, undefined],
  ])('does not wait out a 429 with %s', async (_name, fail, retryAfterSeconds) => {
    const c = client()
    slack.failNext('chat.postMessage', fail)
    const err = await failure(c.postMessage({ channel: 'C1', text: 'x' }))
    expect(err.details).toMatchObject({
      code: 'ratelimited',
      retryable: true,
      status: 429,
      retryAfterSeconds,
    })
    expect(sleeps).toEqual([])
    expect(outbound.to('slack.test')).toHaveLength(1)
  })

  it('honours maxRetries: 0', async () => {
    const c = client({ maxRetries: 0 })
    slack.failNext('chat.postMessage', { status: 502 })
    const err = await failure(c.postMessage({ channel: 'C1', text: 'x' }))
    expect(err.details).toMatchObject({ code: 'http_502', retryable: true, status: 502 })
    expect(sleeps).toEqual([])
  })

  it('gives up on an attempt slower than timeoutMs with a retryable network error', async () => {
    const c = new SlackClient({ token: TOKEN, baseUrl: BASE_URL, maxRetries: 0, timeoutMs: 50 })
    // A Slack that never answers; only the client's own timeout ends the wait.
    outbound = new Outbound()
      .on(
        'slack.test',
        (req) =>
          new Promise<Response>((_resolve, reject) =>
            req.signal.addEventListener('abort', () => reject(req.signal.reason)),
          ),
      )
      .install()
    const err = await failure(c.postMessage({ channel: 'C1', text: 'hi' }))
    expect(err.details).toMatchObject({
      method: 'chat.postMessage',
      code: 'network',
      retryable: true,
    })
    expect(outbound.to('slack.test')).toHaveLength(1)
  })

  it('refuses to be built without a token', () => {
    expect(() => new SlackClient({ token: '' })).toThrow(/SLACK_BOT_TOKEN/)
    outbound = new Outbound().install()
  })
})
