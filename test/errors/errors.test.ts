import { afterEach, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config'
import {
  ConfigError,
  DeliveryError,
  EdgeloopError,
  KernelUsageError,
  ModelError,
  RequestError,
  ToolError,
} from '../../src/errors'
import { ScriptedModel } from '../../src/llm/scripted-model'
import { ApiError } from '../../src/routes/api-error'
import { deliverCallback } from '../../src/runs/delivery/callback'
import { SlackApiError } from '../../src/slack/slack-api-error'
import { SlackClient } from '../../src/slack/web-api'
import { CalculatorError, evaluate } from '../../tools/calculator-parser'
import { FakeSlack } from '../fakes/fake-slack'
import { Outbound } from '../fakes/outbound'

/** What a call threw (it must throw). */
async function thrown(run: () => unknown): Promise<unknown> {
  try {
    await run()
  } catch (err) {
    return err
  }
  throw new Error('expected a throw')
}

describe('the error hierarchy', () => {
  const cause = new TypeError('the original failure')

  it.each([
    ['ConfigError', new ConfigError('MAX_STEPS', 'MAX_STEPS must be a whole number', { cause })],
    ['RequestError', new RequestError('bad_request', 'task is missing', { cause })],
    ['ModelError', new ModelError('model call failed', { code: 'timeout', cause })],
    ['ToolError', new ToolError('calculator: empty expression', { cause })],
    ['DeliveryError', new DeliveryError('callback failed', { cause })],
    ['KernelUsageError', new KernelUsageError('no call c_1', 'unknown_call', { cause })],
  ])('%s is an EdgeloopError named for itself that keeps its message and cause', (name, err) => {
    expect(err).toBeInstanceOf(EdgeloopError)
    expect(err).toBeInstanceOf(Error)
    expect(err.name).toBe(name)
    expect(err.cause).toBe(cause)
    expect(String(err)).toBe(`${name}: ${err.message}`)
  })

  it('leaves no cause key on an error that wraps nothing', () => {
    expect('cause' in new DeliveryError('callback failed')).toBe(false)
    expect('cause' in new ModelError('model call failed', { code: 'http' })).toBe(false)
  })

  it('splits the subclasses by whose fault it is, not into one another', () => {
    const kinds = [ConfigError, RequestError, ModelError, ToolError, DeliveryError]
    for (const kind of kinds) {
      const err = new (kind as unknown as new (...a: string[]) => Error)('x', 'x')
      expect(kinds.filter((other) => err instanceof other)).toEqual([kind])
    }
  })

  it('keeps the fields each kind had before the hierarchy', () => {
    const model = new ModelError('provider answered 503', { status: 503, code: 'http' })
    expect(model.options).toEqual({ status: 503, code: 'http' })
    const delivery = new DeliveryError('callback answered HTTP 429', { retryAfterMs: 5000 })
    expect([delivery.retryable, delivery.retryAfterMs]).toEqual([true, 5000])
    expect(new DeliveryError('no channel', { retryable: false }).retryable).toBe(false)
    const usage = new KernelUsageError('no call c_9 in run r_1', 'unknown_call')
    expect(usage).toBeInstanceOf(RequestError)
    expect(usage.code).toBe('unknown_call')
  })

  it('makes ApiError a RequestError that answers with the one HTTP error body', () => {
    const err = new ApiError(400, 'invalid_body', 'task: missing (expected string)', [
      'task: missing',
    ])
    expect(err).toBeInstanceOf(RequestError)
    expect(err.status).toBe(400)
    expect(err.toJSON()).toEqual({
      error: {
        code: 'invalid_body',
        message: 'task: missing (expected string)',
        details: ['task: missing'],
      },
    })
    expect(new ApiError(404, 'run_not_found', 'no run r_1').toJSON()).toEqual({
      error: { code: 'run_not_found', message: 'no run r_1' },
    })
  })
})

describe('errors thrown by the code, by whose fault', () => {
  let outbound: Outbound | undefined
  afterEach(() => {
    outbound?.restore()
    outbound = undefined
  })

  it('a bad setting is a ConfigError naming the variable and what is allowed', async () => {
    const err = await thrown(() => loadConfig({ SLACK_APPROVERS: 'alice' }))
    expect(err).toBeInstanceOf(ConfigError)
    expect((err as ConfigError).variable).toBe('SLACK_APPROVERS')
    expect((err as ConfigError).message).toMatch(/^SLACK_APPROVERS: "alice" is not a Slack user id/)
  })

  it('a bad setting of an enabled tool names the tool and wraps the setting error', async () => {
    const err = await thrown(() =>
      loadConfig({ ENABLED_TOOLS: 'http_get', HTTP_ALLOWLIST: 'https://a.test/path' }),
    )
    expect(err).toBeInstanceOf(ConfigError)
    expect((err as ConfigError).variable).toBe('HTTP_ALLOWLIST')
    expect((err as ConfigError).message).toContain('(needed by the enabled tool http_get)')
    expect((err as ConfigError).cause).toBeInstanceOf(ConfigError)
  })

  it.each([
    [new TypeError('connection refused'), 'connection refused'],
    [
      // workerd's fetch to a host that does not resolve (test/model-unreachable/ has the real one).
      new Error('internal error; reference = 5ag146ttikher882mmjjeuc0'),
      'internal error; reference = 5ag146ttikher882mmjjeuc0 (workerd logged the cause under wdErrId = 5ag146ttikher882mmjjeuc0, such as a host name that does not resolve)',
    ],
  ])(
    'an unreachable callback (%s) is a retryable DeliveryError naming the host, with the cause',
    async (network, says) => {
      outbound = new Outbound()
        .on('receiver.test', () => {
          throw network
        })
        .install()
      const err = await thrown(() =>
        deliverCallback({
          url: 'https://receiver.test/hook',
          runId: 'r_1',
          deliveryId: 'r_1:callback',
          body: { ok: true },
          secret: 'test-webhook-secret',
          nowMs: Date.now(),
        }),
      )
      expect(err).toBeInstanceOf(DeliveryError)
      expect((err as DeliveryError).message).toBe(`callback to receiver.test failed: ${says}`)
      expect((err as DeliveryError).retryable).toBe(true)
      expect((err as DeliveryError).cause).toBe(network)
    },
  )

  it('a Slack Web API failure is a DeliveryError the outbox can retry or give up on', async () => {
    const slack = new FakeSlack({ token: 'xoxb-test-token', channels: ['C1'] })
    const client = new SlackClient({ token: 'xoxb-test-token', baseUrl: 'https://slack.test/api' })
    outbound = new Outbound().on('slack.test', slack.handler).install()
    const err = await thrown(() => client.postMessage({ channel: 'C404', text: 'hi' }))
    expect(err).toBeInstanceOf(SlackApiError)
    expect(err).toBeInstanceOf(DeliveryError)
    expect((err as SlackApiError).details.code).toBe('channel_not_found')
    expect((err as DeliveryError).retryable).toBe(false)
  })

  it('a model with nothing more to say is a ModelError', async () => {
    const model = new ScriptedModel([])
    const err = await thrown(() =>
      model.complete({ messages: [{ role: 'user', content: 'hi' }], tools: [] } as never),
    )
    expect(err).toBeInstanceOf(ModelError)
    expect(err).toBeInstanceOf(EdgeloopError)
    expect((err as ModelError).options.code).toBe('script_exhausted')
  })

  it('a calculator mistake is a ToolError that says where and what to write', async () => {
    const err = await thrown(() => evaluate('2 +'))
    expect(err).toBeInstanceOf(CalculatorError)
    expect(err).toBeInstanceOf(ToolError)
    expect((err as ToolError).message).toMatch(/position 4/)
  })
})
