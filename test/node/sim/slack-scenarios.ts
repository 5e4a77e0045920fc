/**
 * Slack-started runs in the simulation (docs/slack-app.md): a mention starts a run of 1–4 steps
 * of reads, side effects and sums; its approvals are decided mostly by clicks on the cards in
 * Slack, sometimes through the API; sometimes someone cancels it.
 */
import { reply, type FakeReply } from '../../fakes/fake-openai'
import { drawPeople, postCall, readCall, type Scenario } from './scenarios'

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
