import * as z from 'zod/mini'
import { defineTool } from '../../src/kernel/tool'
import { LOGS } from './fixtures'
import { knownService } from './known-service'

/** DEMO: searches the fixture logs of the order incident (tools/demo/fixtures.ts). */
export const searchLogs = defineTool({
  name: 'search_logs',
  description:
    "DEMO tool (fixture data). Search one service's logs (order, payments, inventory, gateway) " +
    'for lines containing query (case-insensitive substring, no regex). Use a short distinctive ' +
    'word or phrase, e.g. "ERROR", "timeout", "deploy", "503". Returns the most recent matches.',
  params: z.object({
    service: z.string().check(z.describe('Service name: order, payments, inventory or gateway')),
    query: z.string().check(z.minLength(1), z.describe('Text the line must contain, e.g. "ERROR"')),
    limit: z.optional(
      z
        .int()
        .check(
          z.minimum(1),
          z.maximum(100),
          z.describe('Most lines to return (1..100, default 20)'),
        ),
    ),
  }),
  returns: 'How many lines matched, then the most recent `limit` of them, oldest first.',
  handler: ({ service: name, query, limit = 20 }) => {
    const service = knownService(name)
    const lines = LOGS[service]
    const needle = query.toLowerCase()
    const matches = lines.filter((l) => l.toLowerCase().includes(needle))
    const span = `${lines[0]!.slice(11, 16)}–${lines.at(-1)!.slice(11, 16)} UTC`
    if (matches.length === 0) {
      return (
        `No ${service} log lines contain "${query}" (searched ${lines.length} lines, ${span}). ` +
        'Try a shorter query such as "ERROR", "WARN" or "deploy".'
      )
    }
    const shown = matches.slice(-limit)
    const which = shown.length < matches.length ? `; the last ${shown.length} shown` : ''
    return [
      `${matches.length} of ${lines.length} ${service} log lines (${span}) contain "${query}"${which}:`,
      ...shown,
    ].join('\n')
  },
})
