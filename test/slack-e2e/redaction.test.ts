/**
 * Secrets never reach stored or logged errors: Slack's `error` field echoing the bot
 * token (or any other Slack token) is redacted in `deliveries[].lastError` and in the logs.
 */
import { afterEach, beforeEach, expect, it } from 'vitest'
import { captureLogs, restoreLogLevel } from '../service/harness'
import { reply } from '../fakes/fake-openai'
import { BOT_TOKEN, SIGNING_SECRET, SlackWorld } from './harness'

let world: SlackWorld
let logs: ReturnType<typeof captureLogs>
beforeEach(() => {
  world = new SlackWorld()
  logs = captureLogs()
})
afterEach(() => {
  logs.mockRestore()
  restoreLogLevel()
  world.restore()
})

it.each([
  ['the configured bot token', `invalid_auth: token ${BOT_TOKEN} was revoked`, BOT_TOKEN],
  ['the signing secret', `bad_request (${SIGNING_SECRET})`, SIGNING_SECRET],
  ['another Slack token', 'token_revoked xoxp-1234567890-abcdef', 'xoxp-1234567890-abcdef'],
])('a Slack error echoing %s is stored and logged redacted', async (_label, error, secret) => {
  world.slack.failNext('chat.postMessage', { error })
  world.model.enqueue(reply.text('The gateway is healthy.'))
  const { runId } = await world.command('check the gateway')
  await world.settle(runId)

  const view = await world.view(runId)
  const started = view.deliveries.find((d) => d.id === 'slack.started')!
  expect(started.lastError).toContain('[redacted]')
  expect(JSON.stringify(view)).not.toContain(secret)
  const printed = logs.mock.calls.flat().map(String).join('\n')
  expect(printed).toContain('delivery_failed')
  expect(printed).toContain('[redacted]')
  expect(printed).not.toContain(secret)
})

it('a reply echoing a configured secret is posted to Slack without it', async () => {
  // The provider (or a model repeating what it saw) echoes the webhook secret.
  const secret = 'test-webhook-secret'
  world.model.enqueue(reply.text(`All good; for the record the secret is ${secret}.`))
  const { runId } = await world.command('check the gateway')
  await world.settle(runId)
  const posted = JSON.stringify(world.slack.calls)
  expect(posted).toContain('for the record the secret is [redacted].')
  expect(posted).not.toContain(secret)
  expect(JSON.stringify(await world.view(runId))).not.toContain(secret)
})
