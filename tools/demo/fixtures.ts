/**
 * DEMO fixture data: the order service incident the demo tools describe. Nothing here is real;
 * it is a small, consistent world an agent can investigate in a handful of steps:
 *
 * - 14:02 UTC deploy v2.14.0 of `order` (PR #482 cut the db pool from 50 to 10 connections)
 * - 14:03 the pool is pinned at 10/10; p99 latency 180 ms → 2.4 s
 * - 14:05 order error_rate 0.1% → 12%; the gateway shows the same 5xx, from upstream `order`
 * - payments, inventory and the gateway itself are healthy; the fix is a rollback to v2.13.2
 *
 * Everything is computed once from constants: no clock, no randomness, no state between runs.
 */

export const DEMO_DATE = '2026-06-12'
/** The dashboards' "now", in minutes since 00:00 UTC on DEMO_DATE (14:30). */
export const DEMO_NOW = minute(14, 30)
export const DEMO_DEPLOY = minute(14, 2)

export const SERVICES = ['order', 'payments', 'inventory', 'gateway'] as const
export type Service = (typeof SERVICES)[number]

export const METRICS = ['error_rate', 'latency_p99', 'requests', 'db_pool_in_use'] as const
export type Metric = (typeof METRICS)[number]

/** One level of a metric from minute `from` until the next segment. */
export interface Segment {
  from: number
  value: number
  /** For db_pool_in_use: the pool's max_connections. */
  capacity?: number
  /** Relative wiggle (0.05 = ±5%) so the chart looks like a chart. */
  noise?: number
}

export interface Series {
  unit: '%' | 'ms' | 'req/min' | 'connections'
  segments: Segment[]
  /** Extra context printed under the series (the gateway's upstream breakdown). */
  note?: string
}

const before = -Infinity

export const METRIC_SERIES: Record<Service, Partial<Record<Metric, Series>>> = {
  order: {
    error_rate: {
      unit: '%',
      segments: [
        { from: before, value: 0.1, noise: 0.1 },
        { from: minute(14, 5), value: 12, noise: 0.03 },
      ],
    },
    latency_p99: {
      unit: 'ms',
      segments: [
        { from: before, value: 180, noise: 0.05 },
        { from: minute(14, 3), value: 2400, noise: 0.02 },
      ],
    },
    requests: { unit: 'req/min', segments: [{ from: before, value: 1200, noise: 0.04 }] },
    db_pool_in_use: {
      unit: 'connections',
      segments: [
        { from: before, value: 18, capacity: 50, noise: 0.15 },
        { from: minute(14, 3), value: 10, capacity: 10 },
      ],
    },
  },
  gateway: {
    error_rate: {
      unit: '%',
      segments: [
        { from: before, value: 0.1, noise: 0.1 },
        { from: minute(14, 5), value: 4.1, noise: 0.03 },
      ],
      note:
        '5xx by upstream since 14:05 UTC: order 97%, payments 2%, inventory 1% ' +
        '(upstream order answers 503 after ~2.4 s). The gateway passes these errors through.',
    },
    latency_p99: {
      unit: 'ms',
      segments: [
        { from: before, value: 240, noise: 0.05 },
        { from: minute(14, 3), value: 2450, noise: 0.02 },
      ],
    },
    requests: { unit: 'req/min', segments: [{ from: before, value: 3500, noise: 0.04 }] },
  },
  payments: {
    error_rate: { unit: '%', segments: [{ from: before, value: 0.2, noise: 0.1 }] },
    latency_p99: { unit: 'ms', segments: [{ from: before, value: 210, noise: 0.05 }] },
    requests: { unit: 'req/min', segments: [{ from: before, value: 400, noise: 0.05 }] },
    db_pool_in_use: {
      unit: 'connections',
      segments: [{ from: before, value: 8, capacity: 40, noise: 0.2 }],
    },
  },
  inventory: {
    error_rate: { unit: '%', segments: [{ from: before, value: 0.05, noise: 0.1 }] },
    latency_p99: { unit: 'ms', segments: [{ from: before, value: 95, noise: 0.05 }] },
    requests: { unit: 'req/min', segments: [{ from: before, value: 900, noise: 0.05 }] },
    db_pool_in_use: {
      unit: 'connections',
      segments: [{ from: before, value: 5, capacity: 30, noise: 0.2 }],
    },
  },
}

/** Released versions per service, oldest first; the last one is running now. */
export const VERSIONS: Record<Service, readonly string[]> = {
  order: ['v2.13.1', 'v2.13.2', 'v2.14.0'],
  payments: ['v5.1.0', 'v5.2.0'],
  inventory: ['v1.8.0', 'v1.9.1'],
  gateway: ['v3.4.0', 'v3.4.2'],
}

/** Deploys on the incident day, shown as markers on the metrics. */
export const DEPLOYS: Record<Service, { at: number; version: string }[]> = {
  order: [{ at: DEMO_DEPLOY, version: 'v2.14.0' }],
  payments: [],
  inventory: [],
  gateway: [],
}

/** Log lines per service, oldest first: `2026-06-12T14:03:10Z LEVEL message`. */
export const LOGS: Record<Service, readonly string[]> = {
  order: [
    ...every(minute(12, 30), minute(14, 0), 5, (t, i) =>
      [
        'INFO http: POST /orders 201 in 48ms',
        'INFO http: GET /orders/88' + (12 + i) + ' 200 in 11ms',
        'INFO db: pool stats in_use=18 max=50',
      ].map((msg, k) => line(t, k * 20, msg)),
    ),
    line(DEMO_DEPLOY, 5, 'INFO deploy v2.14.0 started by ci'),
    line(DEMO_DEPLOY, 40, 'INFO deploy v2.14.0 finished: 6/6 pods ready'),
    line(DEMO_DEPLOY, 41, 'INFO db: pool configured max_connections=10 acquire_timeout_ms=2000'),
    ...every(minute(14, 3), DEMO_NOW - 1, 1, (t) => [
      line(t, 10, 'ERROR db: timeout acquiring connection from pool (in use 10/10, max 10)'),
      line(t, 12, 'WARN http: POST /orders 503 in 2403ms (db pool exhausted)'),
      line(t, 40, 'ERROR db: timeout acquiring connection from pool (in use 10/10, max 10)'),
    ]),
  ],
  gateway: [
    ...every(minute(12, 30), minute(14, 4), 5, (t) => [
      line(t, 3, 'INFO route POST /orders -> order 201 in 52ms'),
      line(t, 9, 'INFO route POST /payments -> payments 200 in 130ms'),
    ]),
    ...every(minute(14, 5), DEMO_NOW - 1, 1, (t) => [
      line(t, 12, 'WARN upstream order returned 503 for POST /orders in 2412ms'),
      line(t, 30, 'INFO route GET /inventory/sku-114 -> inventory 200 in 31ms'),
    ]),
  ],
  payments: every(minute(12, 30), DEMO_NOW - 1, 10, (t) => [
    line(t, 7, 'INFO charge ch_2291 captured in 180ms'),
    line(t, 31, 'INFO db: pool stats in_use=8 max=40'),
  ]),
  inventory: every(minute(12, 30), DEMO_NOW - 1, 10, (t) => [
    line(t, 2, 'INFO reserve sku-114 qty=1 ok in 22ms'),
    line(t, 44, 'INFO db: pool stats in_use=5 max=30'),
  ]),
}

/** Files of the demo repository, by path. */
export const REPO_FILES: Record<string, string> = {
  'services/order/config/db.yaml': [
    '# Database settings for the order service.',
    'database:',
    '  host: orders-db.internal',
    '  name: orders',
    '  pool:',
    '    max_connections: 10',
    '    acquire_timeout_ms: 2000',
    '    idle_timeout_ms: 30000',
    '',
  ].join('\n'),
  'CHANGELOG.md': [
    '# Changelog (order service)',
    '',
    '## v2.14.0 — reduce db pool max_connections from 50 to 10 to save memory (PR #482)',
    '',
    '- Lower memory per pod by shrinking the database connection pool.',
    '',
    '## v2.13.2 — fix rounding of EUR order totals (PR #471)',
    '',
    '## v2.13.1 — retry inventory reservations once on 409 (PR #466)',
    '',
  ].join('\n'),
  'services/order/README.md': [
    '# order service',
    '',
    'Accepts orders (POST /orders), reserves stock in inventory and charges through payments.',
    'Traffic reaches it through the gateway. Database: Postgres `orders`, via a connection pool',
    'configured in config/db.yaml.',
    '',
    '## Runbook',
    '',
    '- Errors right after a deploy: compare with CHANGELOG.md and roll back to the previous',
    '  version with the deploy tool, then investigate.',
    '- "timeout acquiring connection from pool": the pool is exhausted; check db_pool_in_use.',
    '',
  ].join('\n'),
}

function minute(h: number, m: number): number {
  return h * 60 + m
}

/** `HH:MM` for a minute of the demo day. */
export function clock(t: number): string {
  const m = ((t % 1440) + 1440) % 1440
  return `${pad(Math.floor(m / 60))}:${pad(m % 60)}`
}

function line(t: number, second: number, message: string): string {
  return `${DEMO_DATE}T${clock(t)}:${pad(second)}Z ${message}`
}

function every(
  from: number,
  to: number,
  step: number,
  make: (t: number, i: number) => string[],
): string[] {
  const out: string[] = []
  for (let t = from, i = 0; t <= to; t += step, i++) out.push(...make(t, i))
  return out
}

function pad(n: number): string {
  return String(n).padStart(2, '0')
}
