import { env } from 'cloudflare:workers'
import { listDurableObjectIds } from 'cloudflare:test'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Env } from '../../src/env'
import { APPROVE_ACTION_ID } from '../../src/slack/approval-message'
import { reply } from '../fakes/fake-openai'
import {
  blockActionsBody,
  eventCallbackBody,
  slackSignature,
  slashCommandBody,
  urlVerificationBody,
} from '../fakes/fake-slack'
import { APPROVER, SIGNING_SECRET, SlackWorld, buttonsOf, uniqueId } from './harness'

const RUNS = (env as unknown as Env).RUNS

let world: SlackWorld
beforeEach(() => {
  world = new SlackWorld()
})
afterEach(() => world.restore())

type Forge = (body: string, now: number) => Promise<Record<string, string>>

const sign = async (secret: string, ts: number | string, body: string) => ({
  'x-slack-request-timestamp': String(ts),
  'x-slack-signature': await slackSignature(secret, ts, body),
})

/**
 * Ways a request can fail verification; each returns the headers it is sent with. Timestamps keep
 * a few seconds from the 300 s limit, since the Worker reads its clock a moment after the test
 * (the exact boundary is unit-tested with a fixed clock in test/slack/verify.test.ts).
 */
const FORGERIES: [string, Forge][] = [
  ['no signature headers at all', async () => ({})],
  [
    'no timestamp header',
    async (body, now) => {
      const { 'x-slack-signature': sig } = await sign(SIGNING_SECRET, now, body)
      return { 'x-slack-signature': sig }
    },
  ],
  ['no signature header', async (_b, now) => ({ 'x-slack-request-timestamp': String(now) })],
  ['a signature made with another secret', (body, now) => sign('not-the-secret', now, body)],
  ['a signature of another body', (body, now) => sign(SIGNING_SECRET, now, body + '&x=1')],
  ['a stale timestamp (305 s old)', (body, now) => sign(SIGNING_SECRET, now - 305, body)],
  ['a timestamp 305 s in the future', (body, now) => sign(SIGNING_SECRET, now + 305, body)],
  [
    'a replayed signature under a fresh timestamp',
    async (body, now) => ({
      ...(await sign(SIGNING_SECRET, now - 400, body)),
      'x-slack-request-timestamp': String(now),
    }),
  ],
  [
    'an uppercase-hex signature',
    async (body, now) => {
      const h = await sign(SIGNING_SECRET, now, body)
      return { ...h, 'x-slack-signature': 'v0=' + h['x-slack-signature'].slice(3).toUpperCase() }
    },
  ],
]

const CASES = FORGERIES.flatMap(([name, forge]) => [
  ['/slack/commands', name, forge] as const,
  ['/slack/events', name, forge] as const,
])

describe('Slack request verification', () => {
  it.each(CASES)('%s refuses %s with 401 and starts nothing', async (path, _name, forge) => {
    const body =
      path === '/slack/commands'
        ? slashCommandBody({ text: 'roll back the order service', trigger_id: uniqueId('9.') })
        : eventCallbackBody({ text: '<@UFAKEBOT> roll back order', event_id: uniqueId('Ev') })
    const before = (await listDurableObjectIds(RUNS)).length

    const res = await world.postRaw(path, body, await forge(body, Math.floor(Date.now() / 1000)))

    expect(res.status).toBe(401)
    expect(await res.json()).toMatchObject({ error: { code: 'invalid_slack_signature' } })
    expect((await listDurableObjectIds(RUNS)).length).toBe(before)
    expect(world.slack.calls).toEqual([])
    expect(world.model.bodies).toEqual([])
  })

  it('refuses an unsigned url_verification challenge', async () => {
    const res = await world.postRaw('/slack/events', urlVerificationBody('challenge-xyz'), {})
    expect(res.status).toBe(401)
    expect(await res.text()).not.toContain('challenge-xyz')
  })

  it('accepts a request signed near the edge of the window (295 s old)', async () => {
    const body = urlVerificationBody('edge-of-window')
    const now = Math.floor(Date.now() / 1000)
    const res = await world.postRaw(
      '/slack/events',
      body,
      await sign(SIGNING_SECRET, now - 295, body),
    )
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ challenge: 'edge-of-window' })
  })

  it.each(FORGERIES)(
    '/slack/interactions refuses %s: the approval stays pending, nothing runs or is posted',
    async (_name, forge) => {
      world.model.enqueue(
        reply.toolCalls([
          { name: 'http_post', arguments: { url: 'https://receiver.test/x', body: { a: 1 } } },
        ]),
      )
      const { runId } = await world.command('post to the receiver')
      await world.settle(runId)
      const approval = world.approvalMessage()
      const value = buttonsOf(approval).find((b) => b.action_id === APPROVE_ACTION_ID)!.value
      const body = blockActionsBody({
        action_id: APPROVE_ACTION_ID,
        value,
        user_id: APPROVER,
        message_ts: approval.ts,
      })
      const callsBefore = world.slack.calls.length

      const res = await world.postRaw(
        '/slack/interactions',
        body,
        await forge(body, Math.floor(Date.now() / 1000)),
      )
      await world.settle(runId)

      expect(res.status).toBe(401)
      expect(world.slack.calls.length).toBe(callsBefore)
      expect(world.received).toEqual([])
      const view = await world.view(runId)
      expect(view.status).toBe('awaiting_approval')
      expect(view.pendingApprovals).toHaveLength(1)
    },
  )
})
