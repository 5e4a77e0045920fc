import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { APPROVE_ACTION_ID, EDIT_ACTION_ID } from '../../src/slack/approval-message'
import { ANSWER_MODAL_ACTION_ID } from '../../src/slack/question-message'
import {
  blockActionsBody,
  viewStateValues,
  viewSubmissionBody,
  type FakeSlackMessage,
} from '../fakes/fake-slack'
import { reply } from '../fakes/fake-openai'
import {
  APPROVER,
  buttonsOf,
  CHANNEL,
  RECEIVER_HOST,
  REQUESTER,
  SlackWorld,
  uniqueId,
} from '../slack-e2e/harness'

/**
 * Slack modals (docs/slack-app.md#modals), through the Worker's fetch with signed Slack form
 * posts: an approval card's Edit opens a modal (views.open on the fake Slack Web API) prefilled
 * with the call's arguments; its submission is checked against the tool's schema and approves
 * through the run's `decide`, as the API does. A question without choices gets an Answer button
 * whose modal is checked as the API checks answers.
 */
let world: SlackWorld
beforeEach(() => {
  world = new SlackWorld()
})
afterEach(() => world.restore())

const ARGS = { url: `https://${RECEIVER_HOST}/deploys`, body: { service: 'order' } }

async function awaitingApproval() {
  world.model.enqueue(
    reply.toolCalls([{ name: 'http_post', arguments: ARGS }], { content: 'Record it.' }),
  )
  const { runId } = await world.command('record the deploy')
  await world.settle(runId)
  const card = world.approvalMessage()
  return { runId, card, pending: (await world.view(runId)).pendingApprovals[0]! }
}

/** A click on a card's button, as Slack posts it, with a fresh trigger_id. */
function click(card: FakeSlackMessage, actionId: string, user: string) {
  const button = buttonsOf(card).find((b) => b.action_id === actionId)
  if (!button) throw new Error(`no ${actionId} button`)
  const body = blockActionsBody({
    action_id: actionId,
    value: button.value,
    user_id: user,
    message_ts: card.ts,
  })
  const params = new URLSearchParams(body)
  const payload = JSON.parse(params.get('payload')!) as Record<string, unknown>
  payload.trigger_id = `${Date.now()}.738474920.${uniqueId('').replace(/[^0-9a-f]/g, '')}0`
  return world.post(
    '/slack/interactions',
    new URLSearchParams({ payload: JSON.stringify(payload) }).toString(),
  )
}

function submit(typed: Record<string, string>, user = APPROVER) {
  const modal = world.slack.modals.at(-1)!
  return world.post(
    '/slack/interactions',
    viewSubmissionBody({ view: modal, values: viewStateValues(modal.view, typed), user_id: user }),
  )
}

describe('Edit, then approve, in Slack', () => {
  it('the card offers Edit; a click opens a modal prefilled with the arguments as JSON', async () => {
    const { runId, card, pending } = await awaitingApproval()
    expect(buttonsOf(card).map((b) => b.text.text)).toEqual(['Approve', 'Deny', 'Edit'])
    expect((await click(card, EDIT_ACTION_ID, APPROVER)).status).toBe(200)
    expect(world.slack.modals).toHaveLength(1)
    const { view } = world.slack.modals[0]!
    expect(view).toMatchObject({ type: 'modal', callback_id: 'edgeloop_edit_args' })
    // http_post's body is an object: one JSON input, holding the model's arguments.
    const values = viewStateValues(view) as Record<string, Record<string, { value: string }>>
    expect(JSON.parse(values.edgeloop_json!.value!.value)).toEqual(ARGS)
    expect(JSON.parse(view.private_metadata as string)).toMatchObject({
      r: runId,
      c: pending.callId,
      h: pending.argsHash,
    })
  })

  it('a submission approves the edited call: it runs once, the trace says who changed what', async () => {
    const { runId, card, pending } = await awaitingApproval()
    await click(card, EDIT_ACTION_ID, APPROVER)
    const edited = { ...ARGS, body: { service: 'billing' } }
    world.model.enqueue(reply.text('Recorded billing.'))
    const res = await submit({ edgeloop_json: JSON.stringify(edited) })
    // An empty 200 closes the modal.
    expect(res.status).toBe(200)
    expect(await res.text()).toBe('')
    await world.deliverAll(runId)
    expect(world.received).toHaveLength(1)
    expect(JSON.parse(world.received[0]!.body)).toEqual({ service: 'billing' })
    const call = (await world.view(runId)).result.steps[0]!.calls[0]!
    expect(call.args).toEqual(edited)
    expect(call.approval).toMatchObject({
      decision: 'approved',
      decidedBy: `slack:${APPROVER}`,
      edit: { originalArgs: ARGS, originalHash: pending.argsHash, by: `slack:${APPROVER}` },
    })
    expect(JSON.stringify(world.model.bodies.at(-1))).toContain(
      `[Edited] slack:${APPROVER} changed the arguments before approving`,
    )
    // The card is replaced by the decision, showing the arguments that ran.
    const replaced = world.messages(CHANNEL).find((m) => m.ts === card.ts)!
    expect(buttonsOf(replaced)).toEqual([])
    expect(JSON.stringify(replaced.blocks)).toContain('billing')
  })

  it.each([
    ['not JSON', '{"url": ', /not valid JSON/],
    ['a value of the wrong type', JSON.stringify({ url: ARGS.url, body: 'billing' }), /body/],
    ['an argument the tool does not take', JSON.stringify({ ...ARGS, headers: {} }), /headers/],
    ['not an object', '[1, 2]', /JSON object/],
  ])('%s: the modal shows the error, nothing is decided', async (_l, typed, error) => {
    const { runId, card, pending } = await awaitingApproval()
    await click(card, EDIT_ACTION_ID, APPROVER)
    const res = await submit({ edgeloop_json: typed })
    expect(res.status).toBe(200)
    const body = (await res.json()) as { response_action: string; errors: Record<string, string> }
    expect(body.response_action).toBe('errors')
    expect(body.errors.edgeloop_json).toMatch(error)
    await world.settle(runId)
    expect((await world.view(runId)).pendingApprovals).toEqual([pending])
    expect(world.received).toHaveLength(0)
  })

  it('someone who is not an approver gets no modal and is told why', async () => {
    const { runId, card } = await awaitingApproval()
    await click(card, EDIT_ACTION_ID, REQUESTER)
    expect(world.slack.modals).toHaveLength(0)
    expect(world.slack.ephemerals()).toEqual([
      expect.objectContaining({ user: REQUESTER, text: expect.stringContaining("can't decide") }),
    ])
    expect((await world.view(runId)).status).toBe('awaiting_approval')
  })

  it('a submission after the call was decided elsewhere changes nothing and says so', async () => {
    const { runId, card } = await awaitingApproval()
    await click(card, EDIT_ACTION_ID, APPROVER)
    world.model.enqueue(reply.text('Not recorded.'))
    await world.click(card, 'deny', APPROVER)
    const res = await submit({ edgeloop_json: JSON.stringify(ARGS) })
    const body = (await res.json()) as { response_action: string; view: { blocks: unknown[] } }
    expect(body.response_action).toBe('update')
    expect(JSON.stringify(body.view.blocks)).toContain('Already decided: denied')
    await world.deliverAll(runId)
    expect(world.received).toHaveLength(0)
  })

  it('the notice that replaces the form names the person who decided as a mention', async () => {
    const { card } = await awaitingApproval()
    await click(card, EDIT_ACTION_ID, APPROVER)
    world.model.enqueue(reply.text('Not recorded.'))
    await world.click(card, 'deny', APPROVER)
    const res = await submit({ edgeloop_json: JSON.stringify(ARGS) })
    const body = (await res.json()) as { view: { blocks: { text: { text: string } }[] } }
    expect(body.view.blocks[0]!.text.text).toBe(`Already decided: denied by <@${APPROVER}>.`)
  })

  it.each([
    ['a Slack user', REQUESTER, `<@${REQUESTER}> is not in SLACK_APPROVERS`],
    // A user id that is not one (a forged payload): shown escaped once, never a ping.
    ['not a user id', '<!channel>', '&lt;!channel&gt; is not in SLACK_APPROVERS'],
  ])(
    'a refusal names the submitter (%s) in mrkdwn, outside text escaped',
    async (_l, user, text) => {
      const { card } = await awaitingApproval()
      await click(card, EDIT_ACTION_ID, APPROVER)
      const res = await submit({ edgeloop_json: JSON.stringify(ARGS) }, user)
      const body = (await res.json()) as { view: { blocks: { text: { text: string } }[] } }
      expect(body.view.blocks[0]!.text.text).toContain(`You can't decide this approval: ${text}`)
    },
  )

  it('a note quoting outside text escapes it: a forged call id never pings the channel', async () => {
    const { runId, card, pending } = await awaitingApproval()
    const forged = JSON.stringify({ r: runId, c: '<!channel>', h: pending.argsHash })
    const body = blockActionsBody({
      action_id: APPROVE_ACTION_ID,
      value: forged,
      user_id: APPROVER,
      message_ts: card.ts,
    })
    expect((await world.post('/slack/interactions', body)).status).toBe(200)
    const [note] = world.slack.ephemerals()
    expect(note!.text).toBe(`Nothing was changed: run ${runId} has no call &lt;!channel&gt;`)
    expect((await world.view(runId)).pendingApprovals).toEqual([pending])
  })

  it('a submission by someone not an approver decides nothing', async () => {
    const { runId, card, pending } = await awaitingApproval()
    await click(card, EDIT_ACTION_ID, APPROVER)
    const res = await submit({ edgeloop_json: JSON.stringify(ARGS) }, REQUESTER)
    expect(((await res.json()) as { response_action: string }).response_action).toBe('update')
    expect((await world.view(runId)).pendingApprovals).toEqual([pending])
  })
})

async function asking(args: Record<string, unknown>) {
  world.model.enqueue(reply.toolCalls([{ name: 'ask_person', arguments: args }]))
  const { runId } = await world.command('restart the cache')
  await world.settle(runId)
  const card = world.messages(CHANNEL).find((m) => m.text?.startsWith('Question from run'))!
  return { runId, card }
}

describe('a question without choices, answered in a Slack modal', () => {
  it('free text: Answer opens a text input; the answer becomes the observation', async () => {
    const { runId, card } = await asking({ question: 'Which ticket is this for?' })
    expect(buttonsOf(card).map((b) => b.text.text)).toEqual(['Answer', 'Decline'])
    await click(card, ANSWER_MODAL_ACTION_ID, APPROVER)
    expect(world.slack.modals.at(-1)!.view).toMatchObject({
      callback_id: 'edgeloop_answer_question',
    })
    world.model.enqueue(reply.text('Filed under INC-7.'))
    expect((await submit({ edgeloop_text: 'INC-7' })).status).toBe(200)
    await world.settle(runId)
    const call = (await world.view(runId)).result.steps[0]!.calls[0]!
    expect(call).toMatchObject({
      observation: `slack:${APPROVER} answered: INC-7`,
      approval: { kind: 'question', answer: 'INC-7', decidedBy: `slack:${APPROVER}` },
    })
  })

  const SCHEMA = {
    type: 'object',
    properties: {
      region: { type: 'string', enum: ['eu-west', 'us-east'], description: 'Where to restart' },
      nodes: { type: 'integer', minimum: 1, maximum: 5 },
      drain: { type: 'boolean', default: true },
    },
    required: ['region', 'nodes'],
  }

  it('a flat schema: one input per field, read back with its type', async () => {
    const { runId, card } = await asking({ question: 'How should I restart?', schema: SCHEMA })
    await click(card, ANSWER_MODAL_ACTION_ID, APPROVER)
    const { view } = world.slack.modals.at(-1)!
    const inputs = (
      view.blocks as { type: string; block_id?: string; element?: { type: string } }[]
    )
      .filter((b) => b.type === 'input')
      .map((b) => [b.block_id, b.element!.type])
    expect(inputs).toEqual([
      ['f:region', 'static_select'],
      ['f:nodes', 'number_input'],
      ['f:drain', 'static_select'],
    ])
    world.model.enqueue(reply.text('Restarting.'))
    const res = await submit({ 'f:region': 'us-east', 'f:nodes': '3' })
    expect(res.status).toBe(200)
    await world.settle(runId)
    const call = (await world.view(runId)).result.steps[0]!.calls[0]!
    // The default (drain: true) was the input's initial value, submitted as Slack submits it.
    expect(call.approval!.answer).toEqual({ region: 'us-east', nodes: 3, drain: true })
  })

  it('an answer the schema refuses: the error under its field, the question still pending', async () => {
    const { runId, card } = await asking({ question: 'How should I restart?', schema: SCHEMA })
    await click(card, ANSWER_MODAL_ACTION_ID, APPROVER)
    const res = await submit({ 'f:region': 'eu-west', 'f:nodes': '9' })
    const body = (await res.json()) as { response_action: string; errors: Record<string, string> }
    expect(body).toMatchObject({ response_action: 'errors' })
    expect(Object.keys(body.errors)).toEqual(['f:nodes'])
    const view = await world.view(runId)
    expect(view.status).toBe('awaiting_approval')
    expect(view.pendingApprovals).toHaveLength(1)
  })
})
