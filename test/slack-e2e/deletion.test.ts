import { exports } from 'cloudflare:workers'
import { afterEach, beforeEach, expect, it } from 'vitest'
import { reply } from '../fakes/fake-openai'
import { CHANNEL, REQUESTER, SlackWorld, messageTs, uniqueConversation, uniqueId } from './harness'

/** A deleted run in Slack: its thread and its DM no longer continue it, and say why. */
let world: SlackWorld
beforeEach(() => {
  world = new SlackWorld()
})
afterEach(() => world.restore())

async function deleteRun(runId: string): Promise<void> {
  const res = await exports.default.fetch(`https://edgeloop.test/v1/runs/${runId}`, {
    method: 'DELETE',
    headers: { authorization: 'Bearer test-token' },
  })
  expect(res.status).toBe(200)
  // The removal of the run's Slack links is delivered by its alarm.
  await world.settle(runId)
}

it('a reply in the thread of a deleted run starts nothing and says the run was deleted', async () => {
  const at = messageTs()
  world.model.enqueue(reply.text('The gateway is healthy.'))
  const first = await world.mention({
    text: '<@UFAKEBOT> check the gateway',
    ts: at,
    event_id: uniqueId('Ev'),
  })
  await world.settle(first.runId!)
  await deleteRun(first.runId!)

  const next = await world.message({
    text: 'and the orders?',
    thread_ts: at,
    ts: messageTs(),
    event_id: uniqueId('Ev'),
  })
  expect(next).toMatchObject({ runId: null, created: false, deleted: first.runId })
  expect(world.slack.ephemerals(CHANNEL).at(-1)).toMatchObject({
    user: REQUESTER,
    thread_ts: at,
    text: expect.stringContaining(`(run \`${first.runId}\`) was deleted`),
  })
  expect(world.model.bodies).toHaveLength(1)
})

it('a DM after its latest run was deleted starts a new conversation and says why', async () => {
  const DM = uniqueConversation('D')
  world.model.enqueue(reply.text('The gateway is healthy.'))
  const dm = { channel: DM, channel_type: 'im' as const }
  const first = await world.message({
    ...dm,
    text: 'check the gateway',
    ts: messageTs(),
    event_id: uniqueId('Ev'),
  })
  await world.settle(first.runId!)
  await deleteRun(first.runId!)

  world.model.enqueue(reply.text('Orders are fine.'))
  const next = await world.message({
    ...dm,
    text: 'and orders?',
    ts: messageTs(),
    event_id: uniqueId('Ev'),
  })
  expect(next).toMatchObject({ created: true, continues: null })
  expect(world.slack.ephemerals(DM).at(-1)?.text).toContain(
    `(run \`${first.runId}\`) was deleted, so it cannot be continued. This message starts a new conversation.`,
  )
  await world.settle(next.runId!)
  // Nothing of the deleted run reached the new one.
  const sent = JSON.stringify(world.model.lastBody().messages)
  expect(sent).not.toContain('The gateway is healthy.')
})
