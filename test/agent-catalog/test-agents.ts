/**
 * The agents the `agent-catalog` test project adds to the shipped catalog (vitest.config.ts
 * appends them to agents/catalog.ts for that project's Worker): agents made with the real
 * `defineAgent` that no shipped agent is — Slack channels, a side-effecting tool, an output
 * schema, and two that break the channel rules (offered only when a test enables them).
 */
import * as z from 'zod/mini'
import { defineAgent } from '../../agents/define-agent'
import { INCIDENT_CHANNEL, TICKETS_CHANNEL } from './channels'
import incidentInstructions from './incident.md'

export const incident = defineAgent({
  name: 'incident',
  description: 'Test agent: answers in the incident channel, records decisions with http_post.',
  instructions: incidentInstructions,
  tools: ['http_post', 'calculator'],
  slack: { channels: [INCIDENT_CHANNEL] },
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

export const TEST_AGENTS = [incident, ticket, clash, byName]
