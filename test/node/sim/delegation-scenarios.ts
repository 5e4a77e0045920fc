/**
 * Delegated runs in the simulation (docs/agents.md#delegation): the client starts a `lead` run
 * whose model hands work to the `default` agent (`ask_default`); each such call starts a child
 * run in its own object, with its own script (chosen by the tag at the start of the child's task,
 * as a parent's script is by its own), its own side effects under the deployment's policy and its
 * own approvals, which the people decide on the child's object.
 */
import { reply, type FakeCall, type FakeReply } from '../../fakes/fake-openai'
import { drawPeople, postCall, readCall, type Scenario } from './scenarios'

export interface Delegated {
  /** The parent's call id of `ask_default`. */
  callId: string
  /** The tag that starts the child's task, by which the provider finds its script. */
  tag: string
  script: FakeReply[]
}

/** The parent's script: one `ask_default` per delegated call, one at a time, then the answer. */
export function parentScript(delegated: Delegated[]): FakeReply[] {
  return [
    ...delegated.map((d) =>
      reply.toolCalls(
        [
          {
            id: d.callId,
            name: 'ask_default',
            arguments: { task: `[${d.tag}] Check the status and record it at the receiver.` },
          },
        ],
        { content: `Delegate ${d.callId}.` },
      ),
    ),
    reply.text(`Delegated ${delegated.length} task(s).`),
  ]
}

/** A child's script: 1–3 steps of reads, posts (side effects) and sums, then its answer. */
function childScript(next: () => number, k: number): FakeReply[] {
  const steps: FakeReply[] = []
  const count = 1 + Math.floor(next() * 3)
  for (let j = 0; j < count; j++) {
    const shape = Math.floor(next() * 4)
    const id = `${k}_${j}`
    const calls: FakeCall[] =
      shape === 0
        ? [readCall(`call_read_${id}`)]
        : shape === 1
          ? [postCall(`call_post_${id}`, j)]
          : shape === 2
            ? [postCall(`call_post_${id}`, j), readCall(`call_read_${id}`)]
            : [{ id: `call_calc_${id}`, name: 'calculator', arguments: { expression: `${j} + 1` } }]
    steps.push(reply.toolCalls(calls, { content: `Child step ${j}.` }))
  }
  steps.push(reply.text(`Child ${k} done after ${count} steps.`))
  return steps
}

/** A seeded delegated run: one or two children with side effects, people, maybe a cancel. */
export function delegationScenario(next: () => number, tag = 'sim:0'): Scenario {
  const delegated: Delegated[] = []
  const children = 1 + Math.floor(next() * 2)
  for (let k = 0; k < children; k++)
    delegated.push({ callId: `call_ask_${k}`, tag: `${tag}.c${k}`, script: childScript(next, k) })
  const policy = next() < 0.85 ? 'ask' : 'allow'
  const people = drawPeople(next, 1 + Math.floor(next() * 3), { stale: 0.1, late: 0.05 })
  return {
    name: `delegation ${children} child(ren) ${policy}`,
    script: parentScript(delegated),
    policy,
    idempotent: next() < 0.4,
    people,
    callback: next() < 0.5,
    callbackEvents: next() < 0.5,
    ...(next() < 0.25 ? { cancelAfterMs: Math.floor(next() * 15_000) } : {}),
    delegated,
  }
}
