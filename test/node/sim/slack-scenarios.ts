/**
 * Slack-started runs in the simulation (docs/slack-app.md): a mention starts a run of 1–4 steps
 * of reads, side effects and sums; its approvals are decided mostly by clicks on the cards in
 * Slack, sometimes through the API; sometimes someone cancels it. Others go through Slack's
 * modals (docs/slack-app.md#modals): a side effect edited, then approved, or a question answered
 * in a modal or with a choice's button, by people who may race and submit twice.
 */
import { reply, type FakeReply } from '../../fakes/fake-openai'
import {
  drawPeople,
  postCall,
  readCall,
  RECEIVER,
  type PersonAction,
  type Scenario,
} from './scenarios'

export function slackScenario(next: () => number): Scenario {
  const steps: FakeReply[] = []
  const count = 1 + Math.floor(next() * 4)
  for (let k = 0; k < count; k++) {
    const shape = Math.floor(next() * 4)
    const calls =
      shape === 0
        ? [readCall(`call_read_${k}`)]
        : shape === 1
          ? [postCall(`call_post_${k}`, k)]
          : shape === 2
            ? [postCall(`call_post_${k}`, k), readCall(`call_read_${k}`)]
            : [{ id: `call_calc_${k}`, name: 'calculator', arguments: { expression: `${k} + 1` } }]
    steps.push(reply.toolCalls(calls, { content: `Step ${k}.` }))
  }
  steps.push(reply.text(`Done after ${count} steps.`))
  const policy = next() < 0.85 ? 'ask' : 'allow'
  const people = drawPeople(next, 1 + Math.floor(next() * 3), { stale: 0.1, late: 0.05 }).map(
    (p) => (next() < 0.75 ? { ...p, inSlack: true, staleHash: false } : p),
  )
  return {
    name: `slack ${count} steps ${policy}`,
    script: steps,
    policy,
    idempotent: next() < 0.4,
    people,
    callback: false,
    ...(next() < 0.15 ? { cancelAfterMs: Math.floor(next() * 15_000) } : {}),
    slack: true,
    ...(next() < 0.15 ? { deleteAfterMs: Math.floor(next() * 20_000) } : {}),
  }
}

/**
 * A Slack-started run whose person decides in a modal or by a question's buttons: `edit`, a side
 * effect under `ask` that an approver edits (Edit, then _Approve edited_) while another may deny
 * or approve it as it is; `question`, an `ask_person` with choices (a button each) or without
 * (the Answer modal), answered while another may decline. Submissions may go twice.
 */
export function slackPersonScenario(next: () => number): Scenario {
  const people = (n: number, act: (k: number) => Omit<PersonAction, 'by'>): PersonAction[] =>
    Array.from({ length: n }, (_, k) => ({
      by: ['alice', 'bob', 'carol'][k]!,
      inSlack: true,
      // The one who edits or answers is mostly first to the card; a rival may beat them to it.
      afterMs: Math.floor(next() * (k === 0 ? 1_000 : 3_000)),
      ...(next() < 0.4 ? { submitsTwice: true } : {}),
      ...act(k),
    }))
  const second = next()
  if (next() < 0.5) {
    const edit = { url: `https://${RECEIVER}/effect`, body: { value: 99, call: 'call_post_0' } }
    const rival = second < 0.35 ? 'deny' : 'approve'
    return {
      name: `slack edit-approve${second < 0.7 ? `|${rival}` : ''}`,
      script: [
        reply.toolCalls([postCall('call_post_0', 1)], { content: 'Record it.' }),
        reply.text('Done after 1 steps.'),
      ],
      policy: 'ask',
      idempotent: next() < 0.4,
      people: people(second < 0.7 ? 2 : 1, (k) =>
        k === 0 ? { decision: 'approve', edit } : { decision: rival },
      ),
      callback: false,
      slack: true,
    }
  }
  const choices = next() < 0.5 ? ['eu-west', 'us-east'] : null
  const answers = choices ?? ['eu-west, the one with the canary', 'us-east & friends <all>']
  return {
    name: `slack question ${choices ? 'buttons' : 'modal'}${second < 0.7 ? '|rival' : ''}`,
    script: [
      reply.toolCalls(
        [
          {
            id: 'call_q_0',
            name: 'ask_person',
            arguments: { question: 'Which region?', ...(choices ? { choices } : {}) },
          },
        ],
        { content: 'Ask first.' },
      ),
      reply.text('Done after 1 steps.'),
    ],
    policy: 'ask',
    idempotent: false,
    people: people(second < 0.7 ? 2 : 1, (k) => ({
      decision: k === 1 && second < 0.3 ? 'deny' : 'approve',
      answer: answers[k % 2]!,
    })),
    callback: false,
    question: true,
    slack: true,
  }
}
