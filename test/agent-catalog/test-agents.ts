/**
 * The agents the `agent-catalog` test project adds to the shipped catalog (vitest.config.ts
 * appends them to agents/catalog.ts for that project's Worker): agents made with the real
 * `defineAgent` that no shipped agent is — Slack channels and an approvals channel, a
 * side-effecting tool, an output
 * schema, guardrails at every point and a model-judged one, and three that break the rules (two
 * the channel rules, one a guardrail's; offered only when a test enables them).
 */
import * as z from 'zod/mini'
import { defineAgent } from '../../agents/define-agent'
import { INCIDENT_APPROVALS_CHANNEL, INCIDENT_CHANNEL, TICKETS_CHANNEL } from './channels'
import incidentInstructions from './incident.md'

export const incident = defineAgent({
  name: 'incident',
  description: 'Test agent: answers in the incident channel, records decisions with http_post.',
  instructions: incidentInstructions,
  tools: ['http_post', 'calculator'],
  slack: { channels: [INCIDENT_CHANNEL], approvals: INCIDENT_APPROVALS_CHANNEL },
})

export const ticket = defineAgent({
  name: 'ticket',
  description: 'Test agent: files a structured ticket from the tickets channel.',
  instructions: 'You turn a request into a ticket: a title and a priority.',
  tools: [],
  output: z.object({ title: z.string(), priority: z.enum(['p1', 'p2', 'p3']) }),
  slack: { channels: [TICKETS_CHANNEL] },
})

/** Claims incident's channel: a configuration problem when both are offered. */
export const clash = defineAgent({
  name: 'clash',
  description: 'Test agent: claims a channel another agent has.',
  instructions: '',
  slack: { channels: [INCIDENT_CHANNEL] },
})

/** Names a channel by its #name, not its id: a configuration problem when offered. */
export const byName = defineAgent({
  name: 'by-name',
  description: 'Test agent: a channel written as a #name.',
  instructions: '',
  slack: { channels: ['#incidents'] },
})

const pass = { verdict: 'pass' } as const
const trip = (reason: string) => ({ verdict: 'tripwire', reason }) as const

/** A guardrail at every point (docs/guardrails.md): functions of its own and shipped ones. */
export const guarded = defineAgent({
  name: 'guarded',
  description: 'Test agent: guardrails on its task, calls, observations and answer.',
  instructions: 'You look things up and record them.',
  tools: ['http_get', 'http_post', 'calculator'],
  guardrails: {
    input: [
      {
        name: 'no_drop',
        check: (task) =>
          String(task).includes('DROP TABLE') ? trip('the task asks to drop a table') : pass,
      },
      'pii',
      {
        name: 'broken',
        check: (task) => {
          if (String(task).includes('BREAK')) throw new Error('the checker is down')
          return pass
        },
      },
      {
        name: 'lenient',
        onError: 'pass',
        check: async (task) => {
          if (String(task).includes('LENIENT')) throw new Error('the lenient checker failed')
          return pass
        },
      },
    ],
    toolInput: [
      {
        name: 'no_admin',
        check: (args) =>
          JSON.stringify(args).includes('/admin') ? trip('admin URLs are off limits') : pass,
      },
      {
        name: 'strip_token',
        check: async (args) => {
          const { token, ...rest } = args as Record<string, unknown>
          return token === undefined
            ? pass
            : { verdict: 'rewrite', value: rest, reason: 'tokens are not sent to tools' }
        },
      },
    ],
    toolOutput: [
      'pii',
      'prompt_injection',
      {
        name: 'no_internal',
        check: (text) =>
          String(text).includes('INTERNAL-ONLY') ? trip('the page is internal-only') : pass,
      },
    ],
    output: [
      'secrets',
      'pii',
      {
        name: 'no_forbidden',
        check: (answer) =>
          String(answer).includes('FORBIDDEN') ? trip('the answer names a forbidden word') : pass,
      },
    ],
  },
})

/** A model-judged allow-list of topics on the task (its judge: gpt-test-large). */
export const scoped = defineAgent({
  name: 'scoped',
  description: 'Test agent: answers billing questions only.',
  instructions: 'You answer billing questions.',
  tools: ['calculator'],
  guardrails: {
    input: [{ use: 'topics', topics: ['billing', 'invoices'], model: 'gpt-test-large' }],
  },
})

/** Its answer judged by another agent of the deployment (`ticket`: its model and instructions). */
export const reviewed = defineAgent({
  name: 'reviewed',
  description: 'Test agent: its answers are judged by the ticket agent.',
  instructions: 'You answer briefly.',
  tools: [],
  guardrails: {
    output: [
      { name: 'tone', judge: { agent: 'ticket', instructions: 'Trip answers that are rude.' } },
    ],
  },
})

/** A judge naming an agent the deployment does not have: a configuration problem when offered. */
export const badJudge = defineAgent({
  name: 'bad-judge',
  description: 'Test agent: its guardrail names an unknown judge.',
  instructions: '',
  guardrails: { output: [{ name: 'policy', judge: { agent: 'nobody', instructions: 'Judge.' } }] },
})

/**
 * A policy of the agent's own (docs/human-in-the-loop.md#policies-as-code): every calculation is
 * reviewed by a person, and nothing is posted to /forbidden; the rest is left to the tools'
 * policies and CONFIRM_POLICY.
 */
export const careful = defineAgent({
  name: 'careful',
  description: 'Test agent: a policy written as code for every call.',
  instructions: 'You calculate and record.',
  tools: ['http_post', 'calculator'],
  policy: (call) => {
    if (call.name === 'calculator')
      return { verdict: 'ask', reason: 'every calculation is reviewed' }
    const url = String((call.args as { url?: unknown }).url)
    if (url.includes('/forbidden')) return { verdict: 'deny', reason: 'nothing goes to /forbidden' }
    return 'allow'
  },
})

export const TEST_AGENTS = [
  incident,
  ticket,
  clash,
  byName,
  guarded,
  scoped,
  reviewed,
  badJudge,
  careful,
]
