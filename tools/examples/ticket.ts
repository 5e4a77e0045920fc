import * as z from 'zod/mini'
import { httpUrl, number, required } from '../../src/settings/setting'
import { defineTool, type Tool } from '../../src/kernel/tool'
import { defineConfiguredTool } from '../configured-tool'

/** Where the ticket service lives, and how long one call may take. */
export interface TicketToolOptions {
  /** e.g. "https://tickets.example.com/api"; tickets are POSTed to `<baseUrl>/tickets`. */
  baseUrl: string
  timeoutMs?: number
}

/**
 * The tool as the catalog builds it: the settings it reads, checked when the tool is enabled
 * (a missing TICKETS_URL is a 503 that names TICKETS_URL), and how they become options.
 */
export const ticket = defineConfiguredTool({
  name: 'create_ticket',
  settings: {
    TICKETS_URL: required(
      httpUrl(),
      'the ticket service API, e.g. https://tickets.example.com/api',
    ),
    TICKETS_TIMEOUT_MS: number({ min: 100, max: 60_000, integer: true, fallback: 5_000 }),
  },
  build: (s) => createTicketTool({ baseUrl: s.TICKETS_URL, timeoutMs: s.TICKETS_TIMEOUT_MS }),
})

/**
 * EXAMPLE (docs/tools.md, "Adding a tool"): opens a ticket in an issue tracker. It changes the world, so
 * it declares `sideEffect` (the confirm policy decides before it runs) and, because it sends the
 * run and call id as its idempotency key, `idempotent` (a crashed run may safely send it again).
 */
export function createTicketTool(options: TicketToolOptions): Tool {
  const endpoint = ticketsEndpoint(options.baseUrl)
  return defineTool({
    name: 'create_ticket',
    description:
      'Open a ticket in the issue tracker so that a person follows up. Use it once you know ' +
      'what is wrong and the user wants it tracked; do not use it to ask questions. title: one ' +
      'line naming the problem. body: what happened, the evidence, and what you already did. ' +
      'severity: low, medium or high (high only when users are affected now).',
    params: z.strictObject({
      title: z.string().check(z.minLength(1), z.maxLength(200)),
      body: z.string().check(z.minLength(1)),
      severity: z.enum(['low', 'medium', 'high']),
    }),
    returns: 'The new ticket id and its link, e.g. "created ticket T-42: https://…/T-42".',
    sideEffect: true,
    idempotent: true,
    timeoutMs: options.timeoutMs ?? 5_000,
    handler: async (args, ctx) => {
      const res = await fetch(endpoint, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          // The same key after a crash and retry: the tracker creates the ticket once.
          'idempotency-key': ctx.idempotencyKey,
        },
        body: JSON.stringify(args),
        // Aborted by dispatch when timeoutMs elapses or the run is cancelled.
        signal: ctx.signal,
      })
      if (!res.ok) {
        const detail = (await res.text()).slice(0, 200)
        throw new Error(
          `the ticket service answered ${res.status} (${detail}); the ticket was not created`,
        )
      }
      const ticket = (await res.json()) as { id: string; url: string }
      return `created ticket ${ticket.id}: ${ticket.url}`
    },
  })
}

// Checked when the tool is built, so a bad setting fails at startup, not in the middle of a run.
function ticketsEndpoint(baseUrl: string): URL {
  let base: URL
  try {
    base = new URL(baseUrl)
  } catch {
    throw new TypeError(`create_ticket: baseUrl ${JSON.stringify(baseUrl)} is not an absolute URL`)
  }
  if (base.protocol !== 'https:' && base.protocol !== 'http:') {
    throw new TypeError(`create_ticket: baseUrl must be http(s), got ${base.protocol}`)
  }
  return new URL('tickets', base.href.endsWith('/') ? base : `${base.href}/`)
}
