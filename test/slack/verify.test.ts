import { describe, expect, it } from 'vitest'
import { timingSafeEqual } from '../../src/security/hmac'
import { verifySlackRequest } from '../../src/slack/verify'
import { signedSlackRequest, slashCommandBody } from '../fakes/fake-slack'

// The worked example from Slack's "Verifying requests from Slack" documentation.
const SECRET = '8f742231b10e8888abcd99yyyzzz85a5'
const TIMESTAMP = '1531420618'
const BODY =
  'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c'
const SIGNATURE = 'v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503'
const NOW = 1531420618

const example = {
  signingSecret: SECRET,
  timestamp: TIMESTAMP as string | null,
  signature: SIGNATURE as string | null,
  rawBody: BODY,
  nowSeconds: NOW,
}

describe('verifySlackRequest', () => {
  it("accepts Slack's documented example", async () => {
    expect(await verifySlackRequest(example)).toEqual({ ok: true })
  })

  it.each([
    ['at the edge of the window, 300 s old', NOW + 300],
    ['at the edge of the window, 300 s early', NOW - 300],
  ])('accepts a request %s', async (_name, nowSeconds) => {
    expect(await verifySlackRequest({ ...example, nowSeconds })).toEqual({ ok: true })
  })

  it.each([
    [
      'body changed by one char',
      { rawBody: BODY.replace('roadrunner', 'roadrunnes') },
      /does not match/,
    ],
    ['timestamp changed', { timestamp: '1531420619' }, /does not match/],
    ['stale by 301 s', { nowSeconds: NOW + 301 }, /301 s old/],
    ['future by 301 s', { nowSeconds: NOW - 301 }, /301 s in the future/],
    ['missing timestamp header', { timestamp: null }, /missing X-Slack-Request-Timestamp/],
    ['empty timestamp header', { timestamp: '' }, /missing X-Slack-Request-Timestamp/],
    ['missing signature header', { signature: null }, /missing X-Slack-Signature/],
    ['non-numeric timestamp', { timestamp: '1531420618.5' }, /not a number/],
    ['v1= prefix', { signature: SIGNATURE.replace('v0=', 'v1=') }, /v0 scheme/],
    ['truncated signature', { signature: SIGNATURE.slice(0, -1) }, /wrong length/],
    ['uppercase hex', { signature: 'v0=' + SIGNATURE.slice(3).toUpperCase() }, /lowercase hex/],
    ['non-hex characters', { signature: SIGNATURE.slice(0, -1) + 'g' }, /lowercase hex/],
    ['no signing secret configured', { signingSecret: '' }, /SLACK_SIGNING_SECRET/],
  ])('rejects %s', async (_name, change, reason) => {
    const input = { ...example, ...change }
    const result = await verifySlackRequest(input)
    expect(result.ok).toBe(false)
    if (result.ok) return
    expect(result.reason).toMatch(reason)
    expect(result.reason).not.toContain(SECRET)
  })

  it('rejects a valid signature made with another secret', async () => {
    const req = await signedSlackRequest({
      url: 'https://edgeloop.test/slack/commands',
      secret: 'another-secret',
      body: BODY,
      timestamp: TIMESTAMP,
    })
    const signature = req.headers.get('x-slack-signature')
    expect(signature).toMatch(/^v0=[0-9a-f]{64}$/)
    const result = await verifySlackRequest({ ...example, signature })
    expect(result).toEqual({ ok: false, reason: expect.stringMatching(/does not match/) })
  })

  it('accepts a request built by the fake signer (round trip through headers)', async () => {
    const body = slashCommandBody({ text: 'restart api' })
    const req = await signedSlackRequest({
      url: 'https://edgeloop.test/slack/commands',
      secret: 's3cret',
      body,
      timestamp: 1700000000,
    })
    const result = await verifySlackRequest({
      signingSecret: 's3cret',
      timestamp: req.headers.get('x-slack-request-timestamp'),
      signature: req.headers.get('x-slack-signature'),
      rawBody: new TextDecoder().decode(await req.arrayBuffer()),
      nowSeconds: 1700000010,
    })
    expect(result).toEqual({ ok: true })
  })
})

// The comparison verifySlackRequest relies on (shared with the webhook auth in src/security).
describe('timingSafeEqual', () => {
  it.each([
    ['', '', true],
    ['abc', 'abc', true],
    ['abc', 'abd', false],
    ['abc', 'xbc', false],
    ['abc', 'ab', false],
    ['ab', 'abc', false],
    ['abc', 'abc\u0000', false],
    ['', 'a', false],
    ['é', 'e\u0301', false],
  ])('%j vs %j → %s', (a, b, expected) => {
    expect(timingSafeEqual(a, b)).toBe(expected)
  })
})
