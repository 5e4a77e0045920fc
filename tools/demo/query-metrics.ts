import * as z from 'zod/mini'
import { defineTool } from '../../src/kernel/tool'
import {
  clock,
  DEMO_DATE,
  DEMO_NOW,
  DEPLOYS,
  METRIC_SERIES,
  METRICS,
  type Segment,
  type Series,
} from './fixtures'
import { knownService } from './known-service'

const STEPS = [1, 2, 5, 10, 15, 30, 60, 120]
const MAX_POINTS = 12

/** DEMO: reads the fixture dashboards of the order incident (tools/demo/fixtures.ts). */
export const queryMetrics = defineTool({
  name: 'query_metrics',
  description:
    'DEMO tool (fixture data). Read a time series from the metrics dashboards of one service ' +
    '(order, payments, inventory, gateway) over the last window_minutes, with min/max/latest, ' +
    'level changes and deploy markers. Start here when a service misbehaves. 5xx may originate ' +
    'at the gateway; then use service=gateway to see which upstream they come from. ' +
    'metric: error_rate (% of requests failing), latency_p99 (ms), requests (per minute), ' +
    'db_pool_in_use (database connections in use / pool max).',
  params: z.object({
    service: z.string().check(z.describe('Service name: order, payments, inventory or gateway')),
    metric: z.enum(METRICS),
    window_minutes: z.optional(
      z
        .int()
        .check(
          z.minimum(1),
          z.maximum(1440),
          z.describe('How far back to look, in minutes (1..1440, default 60)'),
        ),
    ),
  }),
  returns: 'One line per sample ("14:05 12.0%"), then a summary with changes and deploys.',
  handler: ({ service: name, metric, window_minutes: window = 60 }) => {
    const service = knownService(name)
    const series = METRIC_SERIES[service][metric]
    if (!series) {
      const available = Object.keys(METRIC_SERIES[service]).join(', ')
      throw new Error(`${service} has no ${metric} metric; its metrics are ${available}`)
    }
    const start = DEMO_NOW - window
    const step = STEPS.find((s) => s * MAX_POINTS >= window) ?? STEPS.at(-1)!
    const times: number[] = []
    for (let t = DEMO_NOW; t >= start; t -= step) times.unshift(t)
    const points = times.map((t) => ({ t, ...sample(series, t) }))
    const values = points.map((p) => p.value)
    const latest = points.at(-1)!
    const lines = [
      `${service} ${metric}, last ${window} min (${clock(start)}${start < 0 ? ' the day before' : ''}` +
        `–${clock(DEMO_NOW)} UTC on ${DEMO_DATE}), one point every ${step} min:`,
      ...points.map((p) => `${clock(p.t)} ${format(series, p.value, p.capacity)}`),
      `Summary: latest ${format(series, latest.value, latest.capacity)}, ` +
        `min ${format(series, Math.min(...values))}, max ${format(series, Math.max(...values))}.`,
    ]
    series.segments.forEach((seg, i) => {
      const prev = series.segments[i - 1]
      if (prev && seg.from > start && seg.from <= DEMO_NOW) {
        lines.push(
          `Level change at ${clock(seg.from)} UTC: ${format(series, prev.value, prev.capacity)} → ` +
            `${format(series, seg.value, seg.capacity)}.`,
        )
      }
    })
    for (const d of DEPLOYS[service]) {
      if (d.at > start && d.at <= DEMO_NOW)
        lines.push(`Deploy at ${clock(d.at)} UTC: ${service} ${d.version}.`)
    }
    if (series.note) lines.push(series.note)
    return lines.join('\n')
  },
})

function sample(series: Series, t: number): { value: number; capacity?: number } {
  const seg: Segment = series.segments.findLast((s) => s.from <= t) ?? series.segments[0]!
  // A fixed wiggle per minute: the same query always returns the same numbers.
  const wiggle = Math.sin(t * 12.9898) * (seg.noise ?? 0)
  let value = seg.value * (1 + wiggle)
  if (seg.capacity !== undefined) value = Math.min(seg.capacity, Math.round(value))
  return { value, capacity: seg.capacity }
}

function format(series: Series, value: number, capacity?: number): string {
  switch (series.unit) {
    case '%':
      return `${value.toFixed(value < 1 ? 2 : 1)}%`
    case 'ms':
      return `${Math.round(value)} ms`
    case 'req/min':
      return `${Math.round(value)} req/min`
    case 'connections':
      return capacity === undefined
        ? `${Math.round(value)} in use`
        : `${Math.round(value)}/${capacity}`
  }
}
