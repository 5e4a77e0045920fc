import { exports } from 'cloudflare:workers'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { APPROVE_ACTION_ID } from '../../src/slack/approval-message'
import { reply } from '../fakes/fake-openai'
import { appHomeOpenedBody, viewBlockActionsBody } from '../fakes/fake-slack'
import {
  APPROVER,
  BASE,
  RECEIVER_HOST,
  REQUESTER,
  SlackWorld,
  uniqueId,
} from '../slack-e2e/harness'

/**
 * The app's Home tab (docs/slack-app.md#app-home) through the Worker's fetch: an
 * `app_home_opened` event publishes (views.publish on the fake Slack Web API) what waits for the
 * person, with the cards' buttons; a click there decides as a click on the card does, and the tab
 * is published again.
 */
const worker = exports.default
let world: SlackWorld
beforeEach(() => {
  world = new SlackWorld()
})
afterEach(() => world.restore())

const ARGS = { url: `https://${RECEIVER_HOST}/deploys`, body: { service: 'order' } }

function openHome(user: string) {
  return world.post('/slack/events', appHomeOpenedBody({ user, event_id: uniqueId('EvHome') }))
}

type Button = { action_id: string; value: string; text: { text: string }; url?: string }
function homeButtons(user: string): Button[] {
  const blocks = (world.slack.homes.get(user)?.view.blocks ?? []) as {
    type: string
    elements?: Button[]
  }[]
  return blocks.flatMap((b) => (b.type === 'actions' ? (b.elements ?? []) : []))
}

/** A click on a Home tab button: a `block_actions` from a view (no channel, no message). */
function clickInHome(user: string, button: Button, homeOf = user) {
  const view = world.slack.homes.get(homeOf)!
  return world.post('/slack/interactions', viewBlockActionsBody({ view, user_id: user, button }))
}

describe('the Home tab', () => {
  it("lists an approver's pending items with the card's buttons; a click there decides", async () => {
    world.model.enqueue(reply.toolCalls([{ name: 'http_post', arguments: ARGS }]))
    const { runId } = await world.command('record the deploy')
    await world.settle(runId)
    const res = await openHome(APPROVER)
    expect(res.status).toBe(200)
    const mine = homeButtons(APPROVER).filter((b) => JSON.parse(b.value).r === runId)
    expect(mine.map((b) => b.text.text)).toEqual(['Approve', 'Deny', 'Edit'])
    expect(JSON.stringify(world.slack.homes.get(APPROVER)!.view)).toContain('http_post')

    world.model.enqueue(reply.text('Recorded.'))
    const approve = mine.find((b) => b.action_id === APPROVE_ACTION_ID)!
    expect((await clickInHome(APPROVER, approve)).status).toBe(200)
    await world.deliverAll(runId)
    expect(world.received).toHaveLength(1)
    const view = await world.view(runId)
    expect(view.status).toBe('succeeded')
    expect(view.result.steps[0]!.calls[0]!.approval).toMatchObject({
      decidedBy: `slack:${APPROVER}`,
    })
    // Published again: the item is gone from the tab.
    const after = homeButtons(APPROVER).filter((b) => JSON.parse(b.value).r === runId)
    expect(after).toEqual([])
  })

  it('someone who is not an approver is told why nothing is listed', async () => {
    await openHome(REQUESTER)
    const home = JSON.stringify(world.slack.homes.get(REQUESTER)!.view)
    expect(home).toContain('not in SLACK_APPROVERS')
    expect(homeButtons(REQUESTER)).toEqual([])
  })

  it('a click in the tab by someone not an approver decides nothing and says why in a modal', async () => {
    world.model.enqueue(reply.toolCalls([{ name: 'http_post', arguments: ARGS }]))
    const { runId } = await world.command('record the deploy')
    await world.settle(runId)
    await openHome(APPROVER)
    const approve = homeButtons(APPROVER).find(
      (b) => b.action_id === APPROVE_ACTION_ID && JSON.parse(b.value).r === runId,
    )!
    // A copied button value: the clicker is checked, not the tab it came from.
    await clickInHome(REQUESTER, approve, APPROVER)
    expect((await world.view(runId)).status).toBe('awaiting_approval')
    const notice = world.slack.modals.at(-1)!.view as { blocks: { text: { text: string } }[] }
    // The clicker is named as a mention, as in an ephemeral note, not as escaped text.
    expect(notice.blocks[0]!.text.text).toBe(
      `You can't decide this approval: <@${REQUESTER}> is not in SLACK_APPROVERS; ask an approver`,
    )
  })

  it("lists a Slack run's item however many items of API runs are newer", async () => {
    world.model.enqueue(reply.toolCalls([{ name: 'http_post', arguments: ARGS }]))
    const { runId: slackRun } = await world.command('record the deploy')
    await world.settle(slackRun)
    // Later, API runs wait on more approvals than the tab lists (HOME_ITEMS is 21).
    world.advance(1_000)
    const apiRuns = [await apiRunWaiting(12), await apiRunWaiting(12)]

    await openHome(APPROVER)
    const runs = new Set(homeButtons(APPROVER).map((b) => JSON.parse(b.value).r as string))
    expect(runs.has(slackRun)).toBe(true)
    // The API runs' items are the console's, not the Slack approvers'.
    expect(apiRuns.filter((r) => runs.has(r))).toEqual([])
  })
})

/** An API run (not Slack's) waiting on `n` approvals, each of its own http_post. */
async function apiRunWaiting(n: number): Promise<string> {
  const calls = Array.from({ length: n }, (_, i) => ({
    id: `call_${i}`,
    name: 'http_post',
    arguments: { ...ARGS, body: { service: `svc-${i}` } },
  }))
  world.model.enqueue(reply.toolCalls(calls))
  const started = await worker.fetch(`${BASE}/v1/runs`, {
    method: 'POST',
    headers: { authorization: 'Bearer test-token', 'content-type': 'application/json' },
    body: JSON.stringify({ task: `record ${n} deploys` }),
  })
  expect(started.status).toBe(202)
  const runId = ((await started.json()) as { id: string }).id
  await world.settle(runId)
  expect((await world.view(runId)).pendingApprovals).toHaveLength(n)
  return runId
}
