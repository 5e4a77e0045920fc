/**
 * A Slack run's approvals are decided where the run lives: a click from another
 * workspace or channel is refused, a Slack click never decides an API run, and API tokens decide
 * Slack runs only when API_APPROVES_SLACK_RUNS says so.
 */
import { env } from 'cloudflare:workers'
import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import worker from '../../src/index'
import type { Env } from '../../src/env'
import { APPROVE_ACTION_ID } from '../../src/slack/approval-message'
import { blockActionsBody } from '../fakes/fake-slack'
import { reply } from '../fakes/fake-openai'
import { APPROVER, BASE, CHANNEL, SlackWorld } from './harness'

const ARGS = { url: 'https://receiver.test/deploys/order/rollback', body: { to: 'v2.13.2' } }

let world: SlackWorld
beforeEach(() => {
  world = new SlackWorld()
})
afterEach(() => world.restore())

async function slackRunAwaitingApproval() {
  world.model.enqueue(reply.toolCalls([{ name: 'http_post', arguments: ARGS }]))
  const { runId } = await world.command('roll back the order service')
  await world.settle(runId)
  const view = await world.view(runId)
  expect(view.status).toBe('awaiting_approval')
  expect(view.slack).toMatchObject({ channel: CHANNEL, teamId: 'T0001' })
  return { runId, pending: view.pendingApprovals[0]!, approval: world.approvalMessage() }
}

describe('a click is checked against the run’s Slack origin', () => {
  it.each([
    ['another workspace', { teamId: 'T0OTHER' }, /another Slack workspace/],
    ['another channel', { channel: 'C0OTHER' }, /another channel/],
  ])('a click from %s decides nothing', async (_label, from, told) => {
    const { runId, approval } = await slackRunAwaitingApproval()
    expect((await world.click(approval, 'approve', APPROVER, from)).status).toBe(200)
    await world.settle(runId)
    expect(world.received).toHaveLength(0)
    expect((await world.view(runId)).status).toBe('awaiting_approval')
    expect(world.slack.ephemerals()).toEqual([
      expect.objectContaining({ user: APPROVER, text: expect.stringMatching(told) }),
    ])
  })

  it('a button value naming an API-started run decides nothing', async () => {
    world.model.enqueue(reply.toolCalls([{ id: 'call_api', name: 'http_post', arguments: ARGS }]))
    const started = await worker.fetch(
      new Request(`${BASE}/v1/runs`, {
        method: 'POST',
        headers: { authorization: 'Bearer test-token', 'content-type': 'application/json' },
        body: JSON.stringify({ task: 'Post', tools: ['http_post'] }),
      }) as Request<unknown, IncomingRequestCfProperties>,
      env as Env,
      createExecutionContext(),
    )
    const { id } = (await started.json()) as { id: string }
    await world.settle(id)
    const { argsHash, callId } = (await world.view(id)).pendingApprovals[0]!
    const res = await world.post(
      '/slack/interactions',
      blockActionsBody({
        action_id: APPROVE_ACTION_ID,
        value: JSON.stringify({ r: id, c: callId, h: argsHash }),
        user_id: APPROVER,
      }),
    )
    expect(res.status).toBe(200)
    await world.settle(id)
    expect((await world.view(id)).status).toBe('awaiting_approval')
    expect(world.received).toHaveLength(0)
  })
})

describe('API decisions on Slack-started runs (API_APPROVES_SLACK_RUNS)', () => {
  async function decideByApi(
    runId: string,
    callId: string,
    argsHash: string,
    settings: Partial<Env>,
  ) {
    const ctx = createExecutionContext()
    const res = await worker.fetch(
      new Request(`${BASE}/v1/runs/${runId}/approvals/${callId}`, {
        method: 'POST',
        headers: { authorization: 'Bearer test-token', 'content-type': 'application/json' },
        body: JSON.stringify({ decision: 'approve', args_hash: argsHash }),
      }) as Request<unknown, IncomingRequestCfProperties>,
      { ...(env as Env), ...settings },
      ctx,
    )
    await waitOnExecutionContext(ctx)
    return res
  }

  it('unset: a token with approvals:write gets 403 slack_run and nothing is decided', async () => {
    const { runId, pending } = await slackRunAwaitingApproval()
    const res = await decideByApi(runId, pending.callId, pending.argsHash, {})
    expect(res.status).toBe(403)
    expect(await res.json()).toMatchObject({ error: { code: 'slack_run' } })
    expect((await world.view(runId)).status).toBe('awaiting_approval')
  })

  it('true: the token decides, recorded under its name', async () => {
    const { runId, pending } = await slackRunAwaitingApproval()
    world.model.enqueue(reply.text('Rolled back.'))
    const res = await decideByApi(runId, pending.callId, pending.argsHash, {
      API_APPROVES_SLACK_RUNS: 'true',
    })
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({ decidedBy: 'api' })
    await world.settle(runId)
    expect(world.received).toHaveLength(1)
  })
})
