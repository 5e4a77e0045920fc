import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { ANSWER_ACTION_PREFIX, DECLINE_QUESTION_ACTION_ID } from '../../src/slack/question-message'
import { blockActionsBody } from '../fakes/fake-slack'
import { reply } from '../fakes/fake-openai'
import { APPROVER, buttonsOf, CHANNEL, REQUESTER, SlackWorld } from '../slack-e2e/harness'

/**
 * A question a Slack-started run asks (ask_person), answered in Slack (docs/slack-app.md): a card
 * with a button per choice and Decline, posted to the run's thread through the fake Slack Web
 * API; a click, signed as Slack signs it, decides the question under the approvers' rules.
 */
let world: SlackWorld
beforeEach(() => {
  world = new SlackWorld()
})
afterEach(() => world.restore())

async function asking() {
  world.model.enqueue(
    reply.toolCalls([
      {
        name: 'ask_person',
        arguments: { question: 'Which region should I restart?', choices: ['eu-west', 'us-east'] },
      },
    ]),
  )
  const { runId } = await world.command('restart the cache')
  await world.settle(runId)
  const card = world.messages(CHANNEL).find((m) => m.text?.startsWith('Question from run'))!
  expect(card).toBeDefined()
  return { runId, card }
}

function click(card: { ts: string }, actionId: string, user: string) {
  const button = buttonsOf(card as never).find((b) => b.action_id === actionId)!
  return world.post(
    '/slack/interactions',
    blockActionsBody({
      action_id: actionId,
      value: button.value,
      user_id: user,
      message_ts: card.ts,
    }),
  )
}

describe('a question in Slack', () => {
  it('the card shows the question with a button per choice and Decline', async () => {
    const { card } = await asking()
    expect(buttonsOf(card).map((b) => [b.action_id, b.text.text])).toEqual([
      [`${ANSWER_ACTION_PREFIX}0`, 'eu-west'],
      [`${ANSWER_ACTION_PREFIX}1`, 'us-east'],
      [DECLINE_QUESTION_ACTION_ID, 'Decline'],
    ])
    expect(JSON.stringify(card.blocks)).toContain('Which region should I restart?')
  })

  it('an approver clicks a choice: the answer is the observation, decided by that user', async () => {
    const { runId, card } = await asking()
    world.model.enqueue(reply.text('Restarted eu-west.'))
    expect((await click(card, `${ANSWER_ACTION_PREFIX}0`, APPROVER)).status).toBe(200)
    await world.settle(runId)
    const view = await world.view(runId)
    expect(view.status).toBe('succeeded')
    expect(view.result.steps[0]!.calls[0]).toMatchObject({
      observation: `slack:${APPROVER} answered: eu-west`,
      approval: { kind: 'question', answer: 'eu-west', decidedBy: `slack:${APPROVER}` },
    })
    // The card's buttons are replaced by what was answered, and by whom.
    const replaced = world.messages(CHANNEL).find((m) => m.ts === card.ts)!
    expect(buttonsOf(replaced)).toEqual([])
    expect(replaced.text).toBe(`:white_check_mark: Answered by <@${APPROVER}>: eu-west`)
  })

  it('someone who is not an approver answers nothing and is told why', async () => {
    const { runId, card } = await asking()
    expect((await click(card, `${ANSWER_ACTION_PREFIX}1`, REQUESTER)).status).toBe(200)
    await world.settle(runId)
    expect((await world.view(runId)).status).toBe('awaiting_approval')
    expect(world.slack.ephemerals()).toEqual([
      expect.objectContaining({ user: REQUESTER, text: expect.stringContaining("can't decide") }),
    ])
  })

  it('Decline: the model is told the person declined', async () => {
    const { runId, card } = await asking()
    world.model.enqueue(reply.text('I will not guess.'))
    await click(card, DECLINE_QUESTION_ACTION_ID, APPROVER)
    await world.settle(runId)
    expect((await world.view(runId)).result.steps[0]!.calls[0]!.observation).toContain(
      `${APPROVER} declined to answer`,
    )
  })
})
