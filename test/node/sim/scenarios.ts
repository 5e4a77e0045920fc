/**
 * What a simulated run is asked to do: the model's reply for each step (chosen by the step a
 * request is for, so a run that asks again after a crash gets the same reply), the confirm policy,
 * whether http_post is declared idempotent, what the people do with each approval, and whether
 * the run reports to a callback. The exhaustive set is every small run the explorer must cover.
 */
import { reply, type FakeCall, type FakeReply } from '../../fakes/fake-openai'
import { parentScript, type Delegated } from './delegation-scenarios'

export const RECEIVER = 'receiver.test'
export const PROVIDER = 'api.openai.test'
export const PROVIDER_KEY = 'sk-sim-fake-openai-0123456789'

export interface PersonAction {
  by: string
  decision: 'approve' | 'deny'
  /** Clicks on an older hash (a stale message): refused, changes nothing. */
  staleHash?: boolean
  /** Milliseconds after the approval appears. */
  afterMs?: number
  /** Clicks the button of the approval card in Slack (a Slack-started run), not the API. */
  inSlack?: boolean
  /** Approves with these arguments instead of the model's (an edit; approvals only). */
  edit?: Record<string, unknown>
  /** What an approve on a question answers (default its first choice). */
  answer?: string
  /** In Slack: submits the modal (an edit, an answer) a second time, as a double click does. */
  submitsTwice?: boolean
}

export interface Scenario {
  name: string
  script: FakeReply[]
  policy: 'ask' | 'allow'
  idempotent: boolean
  /** What people do on each approval; with two, they act at once and their order is explored. */
  people: PersonAction[]
  callback: boolean
  /** Every event goes to the callback too (`callback_events: "all"`), not only the result. */
  callbackEvents?: boolean
  /** A follow-up run (`continue`) once the first one finished, with its own script. */
  followUp?: FakeReply[]
  /** Someone cancels the run this long after it starts. */
  cancelAfterMs?: number
  /** The run may use the MCP server's tools (a read-only search, a destructive delete_page). */
  mcp?: boolean
  /** The run may ask a person (ask_person). */
  question?: boolean
  /** The run is a `lead` that delegates to `default`: each child's call and script. */
  delegated?: Delegated[]
  /** Someone deletes the run this long after it starts (`DELETE /v1/runs/:id`). */
  deleteAfterMs?: number
  /** Started by a mention in Slack: the run's messages go to the simulated Slack Web API. */
  slack?: boolean
}

export const readCall = (id: string): FakeCall => ({
  id,
  name: 'http_get',
  arguments: { url: `https://${RECEIVER}/status/${id}` },
})

export const postCall = (id: string, value = 42): FakeCall => ({
  id,
  name: 'http_post',
  arguments: { url: `https://${RECEIVER}/effect`, body: { value, call: id } },
})

const read = (id: string) => reply.toolCalls([readCall(id)], { content: `Read ${id}.` })
const post = (id: string) => reply.toolCalls([postCall(id)], { content: `Record via ${id}.` })
const answer = (text: string) => reply.text(text)

const SHAPES: { name: string; script: FakeReply[] }[] = [
  { name: 'answer', script: [answer('Nothing to do.')] },
  { name: 'read,answer', script: [read('call_read'), answer('Status is green.')] },
  { name: 'post,answer', script: [post('call_post'), answer('Recorded.')] },
  {
    name: 'read,post,answer',
    script: [read('call_read'), post('call_post'), answer('Recorded 42.')],
  },
]

const APPROVE = { by: 'alice', decision: 'approve' } as const
const DENY = { by: 'bob', decision: 'deny' } as const
const APPROVE_AGAIN = { by: 'carol', decision: 'approve' } as const

/**
 * Every small run: each shape (up to 3 steps, one read-only and one side-effecting tool), under
 * `allow` with http_post idempotent or not, and under `ask` with two people deciding at once
 * (approve and deny, or two approvals), and the longest under `ask` with http_post idempotent.
 * Each reports its result to a callback; every event to the callback is the random explorer's.
 */
export function exhaustiveScenarios(): Scenario[] {
  const out: Scenario[] = []
  for (const shape of SHAPES) {
    const posts = shape.name.includes('post')
    for (const idempotent of posts ? [false, true] : [false]) {
      const idem = idempotent ? ' idempotent' : ''
      out.push({
        name: `${shape.name} allow${idem}`,
        script: shape.script,
        policy: 'allow',
        idempotent,
        people: [],
        callback: true,
      })
    }
    if (!posts) continue
    for (const [label, people] of [
      ['approve|deny', [APPROVE, DENY]],
      ['approve|approve', [APPROVE, APPROVE_AGAIN]],
    ] as const) {
      out.push({
        name: `${shape.name} ask ${label}`,
        script: shape.script,
        policy: 'ask',
        idempotent: false,
        people: [...people],
        callback: true,
      })
    }
  }
  // One side effect behind an approval, declared idempotent: retried after a crash, same key.
  const longest = SHAPES.at(-1)!
  out.push({
    name: `${longest.name} ask approve|deny idempotent`,
    script: longest.script,
    policy: 'ask',
    idempotent: true,
    people: [APPROVE, DENY],
    callback: true,
  })
  // Pending items of other kinds and edits (docs/human-in-the-loop.md), appended so the indexes
  // above stay what replays name: an approval approved with edited arguments beside a denial,
  // and a question (ask_person) answered beside a decline, before a side effect under ask.
  const EDITOR = { ...APPROVE, edit: { url: `https://${RECEIVER}/effect`, body: { value: 99 } } }
  const ask = reply.toolCalls(
    [
      {
        id: 'call_q',
        name: 'ask_person',
        arguments: { question: 'Record?', choices: ['yes', 'no'] },
      },
    ],
    { content: 'Ask first.' },
  )
  const lateScenarios: Scenario[] = [
    {
      name: 'post,answer ask edit-approve|deny',
      script: SHAPES[2]!.script,
      policy: 'ask',
      idempotent: false,
      people: [EDITOR, DENY],
      callback: true,
    },
    {
      name: 'question,post,answer ask answer|decline',
      script: [ask, post('call_post'), answer('Recorded.')],
      policy: 'ask',
      idempotent: false,
      people: [APPROVE, DENY],
      callback: true,
      question: true,
    },
  ]
  // A lead delegating one side effect behind an approval to a child run in an object of its own.
  const child = { callId: 'call_ask', tag: 'sim:0.c0', script: SHAPES[2]!.script }
  out.push({
    name: 'lead: ask_default(post,answer) ask approve|deny',
    script: parentScript([child]),
    policy: 'ask',
    idempotent: false,
    people: [APPROVE, DENY],
    callback: true,
    delegated: [child],
  })
  return [...out, ...lateScenarios]
}

/**
 * `n` people who act on each approval: mostly approve, some on a stale hash, some only after the
 * approval expired (APPROVAL_TTL_SECONDS is 600 s in the simulated deployment).
 */
export function drawPeople(
  next: () => number,
  n: number,
  p: { stale: number; late: number },
): PersonAction[] {
  const people: PersonAction[] = []
  for (let i = 0; i < n; i++) {
    people.push({
      by: ['alice', 'bob', 'carol'][i % 3]!,
      decision: next() < 0.75 ? 'approve' : 'deny',
      ...(next() < p.stale ? { staleHash: true } : {}),
      afterMs: Math.floor(next() < p.late ? 700_000 : next() * 5_000),
    })
  }
  return people
}

/** A longer seeded run: more steps, parallel reads, side effects beside reads, maybe a follow-up. */
export function randomScenario(next: () => number): Scenario {
  const steps: FakeReply[] = []
  const count = 1 + Math.floor(next() * 5)
  for (let k = 0; k < count; k++) {
    const shape = Math.floor(next() * 5)
    const calls =
      shape === 0
        ? [readCall(`call_read_${k}`)]
        : shape === 1
          ? [readCall(`call_read_${k}a`), readCall(`call_read_${k}b`), readCall(`call_read_${k}c`)]
          : shape === 2
            ? [postCall(`call_post_${k}`, k)]
            : shape === 3
              ? [postCall(`call_post_${k}`, k), readCall(`call_read_${k}`)]
              : [
                  {
                    id: `call_calc_${k}`,
                    name: 'calculator',
                    arguments: { expression: `${k} + 1` },
                  },
                ]
    steps.push(reply.toolCalls(calls, { content: `Step ${k}.` }))
  }
  steps.push(answer(`Done after ${count} steps.`))
  const policy = next() < 0.7 ? 'ask' : 'allow'
  const people = drawPeople(next, Math.floor(next() * 4), { stale: 0.15, late: 0.1 })
  const scenario: Scenario = {
    name: `random ${count} steps ${policy}`,
    script: steps,
    policy,
    idempotent: next() < 0.4,
    people,
    callback: next() < 0.7,
    ...(next() < 0.3 ? { followUp: [read('call_read_f'), answer('Follow-up done.')] } : {}),
    ...(next() < 0.15 ? { cancelAfterMs: Math.floor(next() * 20_000) } : {}),
  }
  // Drawn last, so that the draws above (and the seeds that replay them) stay as they were.
  scenario.callbackEvents = next() < 0.7
  if (next() < 0.3) {
    // An MCP step before the answer: a read-only search beside a destructive delete_page.
    scenario.mcp = true
    const k = steps.length - 1
    const calls: FakeCall[] = [
      { id: `call_mcp_search_${k}`, name: 'docs__search', arguments: { query: 'alarms' } },
      { id: `call_mcp_delete_${k}`, name: 'docs__delete_page', arguments: { page: `old-${k}` } },
    ]
    steps.splice(k, 0, reply.toolCalls(calls, { content: 'Clean up the docs.' }))
  }
  return scenario
}
