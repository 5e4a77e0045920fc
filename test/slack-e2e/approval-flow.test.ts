import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { APPROVE_ACTION_ID } from '../../src/slack/approval-message'
import { blockActionsBody } from '../fakes/fake-slack'
import { reply } from '../fakes/fake-openai'
import {
  APPROVER,
  APPROVER_2,
  CHANNEL,
  REQUESTER,
  SlackWorld,
  blockText,
  buttonsOf,
} from './harness'

const ARGS = {
  url: 'https://receiver.test/deploys/order/rollback',
  body: { to_version: 'v2.13.2', ticket: 'INC-42' },
}
const REASON = 'Errors rose right after v2.14.0 shipped; rolling back to v2.13.2 should stop them.'
const TASK = 'the order service is failing since the last deploy, fix it'

let world: SlackWorld
beforeEach(() => {
  world = new SlackWorld()
})
afterEach(() => world.restore())

/** A slash command run whose first step asks for `http_post`, settled at the approval. */
async function runAwaitingApproval() {
  world.model.enqueue(
    reply.toolCalls([{ name: 'http_post', arguments: ARGS }], { content: REASON }),
  )
  const { runId } = await world.command(TASK)
  await world.settle(runId)
  const view = await world.view(runId)
  expect(view.status).toBe('awaiting_approval')
  return { runId, view, pending: view.pendingApprovals[0]!, approval: world.approvalMessage() }
}

describe('a slash command run that needs an approval', () => {
  it('acknowledges at once, before any model or Slack call', async () => {
    world.model.enqueue(reply.text('nothing to do'))
    const { ack, runId } = await world.command(TASK)
    expect(ack.response_type).toBe('ephemeral')
    expect(ack.text).toContain(runId)
    // The run advances in its Durable Object's alarm, not in the request.
    expect(world.model.bodies).toHaveLength(0)
    expect(world.slack.calls).toHaveLength(0)
    expect((await world.view(runId)).requestedBy).toBe(`slack:${REQUESTER}`)
  })

  it('posts the started message and the approval request with args, reason, expiry and buttons', async () => {
    const { runId, pending, approval } = await runAwaitingApproval()
    const [started, ...rest] = world.messages()
    expect(rest).toEqual([approval])
    expect(started!.thread_ts).toBeUndefined()
    expect(started!.text).toContain(runId)
    expect(started!.text).toContain(TASK)
    expect(approval.thread_ts).toBe(started!.ts)

    expect(pending).toMatchObject({ tool: 'http_post', args: ARGS, reason: REASON })
    const text = blockText(approval)
    expect(text).toContain('Approval needed: http_post')
    expect(text).toContain('*Tool:* `http_post`')
    expect(text).toContain(`*Requested by:* <@${REQUESTER}>`)
    expect(text).toContain('```\n' + JSON.stringify(ARGS, null, 2) + '\n```')
    expect(text).toContain(REASON)
    const expiresAt = Date.parse(pending.expiresAt)
    expect(expiresAt - Date.parse(pending.requestedAt)).toBe(24 * 3600 * 1000)
    expect(text).toContain(`Expires <!date^${Math.floor(expiresAt / 1000)}^`)

    const buttons = buttonsOf(approval)
    // http_post takes edited arguments: Edit opens a modal (test/hitl/slack-modals.test.ts).
    expect(buttons.map((b) => [b.text.text, b.style])).toEqual([
      ['Approve', 'primary'],
      ['Deny', 'danger'],
      ['Edit', undefined],
    ])
    for (const b of buttons) {
      expect(JSON.parse(b.value)).toEqual({ r: runId, c: pending.callId, h: pending.argsHash })
    }
    // Nothing ran while waiting, and the model was asked once.
    expect(world.received).toHaveLength(0)
    expect(world.model.bodies).toHaveLength(1)
  })

  it('runs the tool once after an approver clicks Approve, updates the message and answers', async () => {
    const { runId, pending, approval } = await runAwaitingApproval()
    world.model.enqueue(reply.text('Rolled back the order service to v2.13.2.'))
    const before = world.slack.calls.length

    const res = await world.click(approval, 'approve', APPROVER)
    expect(res.status).toBe(200)
    // The click only records the decision; the run's outbox replaces the buttons.
    expect(world.slack.calls).toHaveLength(before)
    expect(world.received).toHaveLength(0)

    await world.settle(runId)
    expect(world.received).toHaveLength(1)
    expect(world.received[0]).toMatchObject({ method: 'POST', url: ARGS.url })
    expect(JSON.parse(world.received[0]!.body)).toEqual(ARGS.body)
    // Retries of the POST after a crash reuse the key, so the receiver can deduplicate them.
    expect(world.received[0]!.headers['idempotency-key']).toContain(pending.callId)

    const updated = world.messages().find((m) => m.ts === approval.ts)!
    expect(updated.updates).toBe(1)
    expect(buttonsOf(updated)).toEqual([])
    expect(blockText(updated)).toContain(`Approved by <@${APPROVER}> at <!date^`)
    expect(blockText(updated)).toContain('```\n' + JSON.stringify(ARGS, null, 2) + '\n```')

    const toolMessage = world.model.lastBody().messages.find((m) => m.role === 'tool')!
    expect(toolMessage.tool_call_id).toBe(pending.callId)
    expect(toolMessage.content).toContain('HTTP 201')

    const final = world.messages().at(-1)!
    expect(final.thread_ts).toBe(world.messages()[0]!.ts)
    expect(final.text).toContain('Rolled back the order service to v2.13.2.')
    expect(final.text).toContain('Done in 2 steps')
    // Started, its progress ("waiting for approval"), the request, the decision, the answer. The
    // progress update with the totals keeps a one-a-second pace (see progress.test.ts), a pace of
    // real time: on a loaded machine the second may already be over when the run ends, and the
    // totals then go out with the answer instead of from the next alarm. Either way, once.
    const started = world.messages()[0]!.ts
    const totals = world.slack.calls
      .map((c, i) => (c.method === 'chat.update' && c.body?.ts === started ? i : -1))
      .filter((i) => i >= 0)
    expect(totals.length === 1 || totals.length === 2).toBe(true)
    const inline = totals.length === 2
    // The totals sent with the answer are the second update of the started message: left out,
    // the rest is the same sequence as when the alarm sends them later.
    expect(
      world.slack.calls
        .filter((_, i) => !inline || i !== totals[1])
        .map((c) => [c.method, c.body?.ts === approval.ts]),
    ).toEqual([
      ['chat.postMessage', false],
      ['chat.update', false],
      ['chat.postMessage', false],
      ['chat.update', true],
      ['chat.postMessage', false],
    ])
    const view = await world.view(runId)
    expect(view.status).toBe('succeeded')
    expect(view.result.answer).toBe('Rolled back the order service to v2.13.2.')
    expect(view.deliveries.map((d) => [d.id, d.status, d.attempts]).sort()).toEqual(
      [
        ['slack.started', 'delivered', 1],
        [`slack.approval:${pending.callId}`, 'delivered', 1],
        [`slack.decision:${pending.callId}`, 'delivered', 1],
        ['slack.final', 'delivered', 1],
        // Replies in the thread continue this run (the thread starts with our first message).
        ['slack.thread', 'delivered', 1],
        // The totals: due a second after the last progress update, or already sent.
        inline ? ['slack.progress', 'delivered', 1] : ['slack.progress', 'pending', 0],
      ].sort(),
    )
    if (!inline) expect(await world.nextAlarm(runId)).toBe(true)
    expect(
      (await world.view(runId)).deliveries.find((d) => d.id === 'slack.progress'),
    ).toMatchObject({ status: 'delivered', attempts: 1 })
    expect(world.messages()[0]!.text).toMatch(/\ndone in 2 steps · \d+ tokens$/)
    // Settled means settled: no alarm re-runs anything.
    expect(await world.nextAlarm(runId)).toBe(false)
    await world.settle(runId)
    expect(world.received).toHaveLength(1)
    expect(world.model.bodies).toHaveLength(2)
  })

  it('does not run the tool when an approver clicks Deny, and says so', async () => {
    const { runId, approval } = await runAwaitingApproval()
    world.model.enqueue(reply.text('The rollback was denied, so nothing was changed.'))

    expect((await world.click(approval, 'deny', APPROVER_2)).status).toBe(200)
    await world.settle(runId)

    expect(world.received).toHaveLength(0)
    const updated = world.messages().find((m) => m.ts === approval.ts)!
    expect(buttonsOf(updated)).toEqual([])
    expect(blockText(updated)).toContain(`Denied by <@${APPROVER_2}>`)
    expect(updated.text).toContain('Denied')
    const toolMessage = world.model.lastBody().messages.find((m) => m.role === 'tool')!
    expect(toolMessage.content).toContain(
      `[ToolError] http_post was not run: it was denied by slack:${APPROVER_2}`,
    )
    expect(world.messages().at(-1)!.text).toContain(
      'The rollback was denied, so nothing was changed.',
    )
    expect((await world.view(runId)).status).toBe('succeeded')
  })

  it('marks the request Expired when nobody decides in time, and a late click changes nothing', async () => {
    const { runId, pending, approval } = await runAwaitingApproval()
    world.model.enqueue(reply.text('Nobody approved the rollback in time; nothing was changed.'))

    // Not due yet: an alarm before the expiry leaves the run waiting.
    world.advance(Date.parse(pending.expiresAt) - Date.now() - 60_000)
    await world.settle(runId)
    expect((await world.view(runId)).status).toBe('awaiting_approval')
    expect(world.slack.updatesOf(approval.ts)).toHaveLength(0)

    world.advance(61_000)
    await world.settle(runId)
    const updated = world.messages().find((m) => m.ts === approval.ts)!
    expect(buttonsOf(updated)).toEqual([])
    expect(blockText(updated)).toContain('Expired — not run')
    expect(blockText(updated)).not.toContain('Denied')
    expect(world.model.lastBody().messages.find((m) => m.role === 'tool')!.content).toContain(
      'the approval request expired with no decision',
    )
    expect((await world.view(runId)).status).toBe('succeeded')

    // A stale button clicked afterwards is refused and runs nothing.
    expect((await world.click(approval, 'approve', APPROVER)).status).toBe(200)
    await world.settle(runId)
    expect(world.received).toHaveLength(0)
    expect(world.slack.ephemerals(CHANNEL)).toEqual([
      expect.objectContaining({ user: APPROVER, text: expect.stringMatching(/expired/i) }),
    ])
  })
})

describe('clicks that must not decide twice', () => {
  it('tells a double-clicking approver it is already decided and runs the tool once', async () => {
    const { runId, approval } = await runAwaitingApproval()
    world.model.enqueue(reply.text('Rolled back.'))

    expect((await world.click(approval, 'approve', APPROVER)).status).toBe(200)
    expect((await world.click(approval, 'approve', APPROVER)).status).toBe(200)
    await world.settle(runId)

    expect(world.received).toHaveLength(1)
    expect(world.slack.updatesOf(approval.ts)).toHaveLength(1)
    expect(world.slack.ephemerals()).toEqual([
      expect.objectContaining({
        channel: CHANNEL,
        user: APPROVER,
        text: expect.stringContaining(`Already decided: approved by <@${APPROVER}>`),
      }),
    ])
  })

  it('lets one of two approvers clicking at once win; the other is told who decided', async () => {
    const { runId, approval } = await runAwaitingApproval()
    world.model.enqueue(reply.text('Rolled back.'))

    const answers = await Promise.all([
      world.click(approval, 'approve', APPROVER),
      world.click(approval, 'deny', APPROVER_2),
    ])
    expect(answers.map((r) => r.status)).toEqual([200, 200])
    await world.settle(runId)

    const view = await world.view(runId)
    const call = view.result.steps[0]!.calls[0]! as { approval?: { decidedBy?: string } }
    // Recorded as the Slack person (docs/human-in-the-loop.md), shown as a mention.
    const winner = call.approval?.decidedBy?.replace(/^slack:/, '')
    expect([`slack:${APPROVER}`, `slack:${APPROVER_2}`]).toContain(call.approval?.decidedBy)
    const loser = winner === APPROVER ? APPROVER_2 : APPROVER
    expect(world.received).toHaveLength(winner === APPROVER ? 1 : 0)
    expect(world.slack.updatesOf(approval.ts)).toHaveLength(1)
    expect(world.slack.ephemerals()).toEqual([
      expect.objectContaining({
        user: loser,
        text: expect.stringContaining(
          `Already decided: ${winner === APPROVER ? 'approved' : 'denied'} by <@${winner}>`,
        ),
      }),
    ])
    expect(view.status).toBe('succeeded')
  })

  it('answers an unauthorised clicker privately and changes nothing', async () => {
    const { runId, approval } = await runAwaitingApproval()
    const callsBefore = world.slack.calls.length

    expect((await world.click(approval, 'approve', REQUESTER)).status).toBe(200)
    await world.settle(runId)

    expect(world.slack.ephemerals()).toEqual([
      expect.objectContaining({
        channel: CHANNEL,
        user: REQUESTER,
        thread_ts: approval.thread_ts,
        text: expect.stringContaining("You can't decide this approval"),
      }),
    ])
    expect(world.slack.calls.slice(callsBefore).map((c) => c.method)).toEqual([
      'chat.postEphemeral',
    ])
    const view = await world.view(runId)
    expect(view.status).toBe('awaiting_approval')
    expect(view.pendingApprovals).toHaveLength(1)
    expect(world.received).toHaveLength(0)
    expect(buttonsOf(world.approvalMessage())).toHaveLength(3) // Approve, Deny, Edit: still there
  })

  it('tells an approver clicking a button of an unknown run, and creates no run', async () => {
    const runId = `run_${'0'.repeat(31)}9`
    const value = JSON.stringify({ r: runId, c: 'call_1', h: 'a'.repeat(64) })

    const res = await world.post(
      '/slack/interactions',
      blockActionsBody({ action_id: APPROVE_ACTION_ID, value, user_id: APPROVER }),
    )

    expect(res.status).toBe(200)
    expect(world.slack.ephemerals()).toEqual([
      expect.objectContaining({ user: APPROVER, text: `Run ${runId} no longer exists.` }),
    ])
    expect((await world.getRun(runId)).status).toBe(404)
  })

  it.each([
    ['a value that is not JSON', 'approve-it'],
    ['a value without an args hash', JSON.stringify({ r: `run_${'1'.repeat(32)}`, c: 'call_1' })],
    ['a malformed run id', JSON.stringify({ r: 'run_../x', c: 'call_1', h: 'b'.repeat(64) })],
  ])('refuses a button with %s (400) and posts nothing', async (_name, value) => {
    const res = await world.post(
      '/slack/interactions',
      blockActionsBody({ action_id: APPROVE_ACTION_ID, value, user_id: APPROVER }),
    )
    expect(res.status).toBe(400)
    expect(await res.json()).toMatchObject({ error: { code: 'invalid_slack_payload' } })
    expect(world.slack.calls).toEqual([])
  })
})
