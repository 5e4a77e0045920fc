import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { demoTools } from '../../tools/demo'
import { Outbound } from '../fakes/outbound'
import { call, contextFor } from './dispatch-context'

// The strict fake with no hosts: any network use by a demo tool fails the test.
let outbound: Outbound
beforeEach(() => {
  outbound = new Outbound().install()
})
afterEach(() => outbound.restore())

const ctx = contextFor(demoTools)

describe('demo tools: the order incident', () => {
  it('can be solved in a handful of steps', async () => {
    // 1. The gateway reports 5xx and names the upstream.
    const gateway = await call(ctx, 'query_metrics', { service: 'gateway', metric: 'error_rate' })
    expect(gateway).toContain('Level change at 14:05 UTC: 0.10% → 4.1%.')
    expect(gateway).toContain('5xx by upstream since 14:05 UTC: order 97%')

    // 2. order's errors jumped right after its deploy.
    const errors = await call(ctx, 'query_metrics', { service: 'order', metric: 'error_rate' })
    expect(errors).toMatch(/^order error_rate, last 60 min \(13:30–14:30 UTC on 2026-06-12\)/)
    expect(errors).toContain('Level change at 14:05 UTC: 0.10% → 12.0%.')
    expect(errors).toContain('Deploy at 14:02 UTC: order v2.14.0.')

    // 3. Its db pool is pinned; latency followed.
    const pool = await call(ctx, 'query_metrics', { service: 'order', metric: 'db_pool_in_use' })
    expect(pool).toContain('14:30 10/10')
    expect(pool).toContain('Level change at 14:03 UTC: 18/50 → 10/10.')
    const latency = await call(ctx, 'query_metrics', { service: 'order', metric: 'latency_p99' })
    expect(latency).toContain('Level change at 14:03 UTC: 180 ms → 2400 ms.')

    // 4. The logs say why.
    const logs = await call(ctx, 'search_logs', { service: 'order', query: 'error db:', limit: 2 })
    expect(logs).toBe(
      '54 of 141 order log lines (12:30–14:29 UTC) contain "error db:"; the last 2 shown:\n' +
        '2026-06-12T14:29:10Z ERROR db: timeout acquiring connection from pool (in use 10/10, max 10)\n' +
        '2026-06-12T14:29:40Z ERROR db: timeout acquiring connection from pool (in use 10/10, max 10)',
    )
    expect(await call(ctx, 'search_logs', { service: 'order', query: 'DEPLOY' })).toContain(
      '2026-06-12T14:02:05Z INFO deploy v2.14.0 started by ci',
    )

    // 5. The changelog names the change and the version to return to.
    const changelog = await call(ctx, 'read_repo_file', { path: 'CHANGELOG.md' })
    expect(changelog).toContain(
      '## v2.14.0 — reduce db pool max_connections from 50 to 10 to save memory (PR #482)',
    )
    expect(changelog).toContain('## v2.13.2')
    expect(
      await call(ctx, 'read_repo_file', { path: './services/order/config/db.yaml' }),
    ).toContain('max_connections: 10')

    // 6. Roll back (approved), without touching the network.
    expect(
      await call(
        contextFor(demoTools, { policy: { mode: 'ask' }, approved: true }),
        'rollback_deploy',
        {
          service: 'order',
          to_version: 'v2.13.2',
          reason: 'v2.14.0 cut the db pool to 10 (PR #482)',
        },
      ),
    ).toBe(
      'rolled back order from v2.14.0 to v2.13.2 (DEMO: nothing was deployed). ' +
        'Reason recorded: v2.14.0 cut the db pool to 10 (PR #482)',
    )
    expect(outbound.requests).toEqual([])
  })

  it.each(['payments', 'inventory'])('%s is healthy', async (service) => {
    for (const metric of ['error_rate', 'latency_p99', 'db_pool_in_use']) {
      const series = await call(ctx, 'query_metrics', { service, metric, window_minutes: 120 })
      expect(series).toMatch(new RegExp(`^${service} ${metric}, last 120 min`))
      expect(series).not.toContain('Level change')
      expect(series).not.toContain('Deploy at')
    }
    expect(await call(ctx, 'search_logs', { service, query: 'error' })).toMatch(
      /^No .* contain "error"/,
    )
  })

  it.each([
    [1, 'one point every 1 min:\n14:29 ', 2],
    [60, 'one point every 5 min:', 13],
    [1440, '(14:30 the day before–14:30 UTC on 2026-06-12), one point every 120 min:', 13],
  ])('samples a %i-minute window in at most 13 points', async (window, header, points) => {
    const series = await call(ctx, 'query_metrics', {
      service: 'order',
      metric: 'requests',
      window_minutes: window,
    })
    expect(series).toContain(header)
    expect(series.split('\n').filter((l) => /^\d\d:\d\d /.test(l))).toHaveLength(points)
  })

  it('always answers the same for the same query', async () => {
    const args = { service: 'order', metric: 'latency_p99', window_minutes: 30 }
    expect(await call(ctx, 'query_metrics', args)).toBe(await call(ctx, 'query_metrics', args))
  })

  it.each([
    [
      'query_metrics',
      { service: 'orders', metric: 'error_rate' },
      'failed: Error: unknown service "orders"; the services are order, payments, inventory, gateway',
    ],
    [
      'query_metrics',
      { service: 'gateway', metric: 'db_pool_in_use' },
      'gateway has no db_pool_in_use metric; its metrics are error_rate, latency_p99, requests',
    ],
    [
      'query_metrics',
      { service: 'order', metric: 'cpu' },
      'metric: must be one of "error_rate", "latency_p99", "requests", "db_pool_in_use"',
    ],
    [
      'query_metrics',
      { service: 'order', metric: 'requests', window_minutes: 0 },
      'window_minutes: must be >= 1',
    ],
    [
      'query_metrics',
      { service: 'order', metric: 'requests', window_minutes: 1441 },
      'window_minutes: must be <= 1440',
    ],
    ['search_logs', { service: 'order', query: 'x', limit: 101 }, 'limit: must be <= 100'],
    ['search_logs', { service: 'order', query: '' }, 'query: must be >= 1'],
    ['search_logs', { service: 'db', query: 'x' }, 'unknown service "db"'],
    [
      'read_repo_file',
      { path: 'secrets.env' },
      'no file "secrets.env" in the repository; available paths: services/order/config/db.yaml, CHANGELOG.md, services/order/README.md',
    ],
    [
      'rollback_deploy',
      { service: 'order', to_version: 'v2.14.0', reason: 'r' },
      'order already runs v2.14.0; pick an earlier version: v2.13.2, v2.13.1',
    ],
    [
      'rollback_deploy',
      { service: 'order', to_version: 'v9.9.9', reason: 'r' },
      'order has no version "v9.9.9"; earlier versions are v2.13.2, v2.13.1 (it runs v2.14.0)',
    ],
    [
      'rollback_deploy',
      { service: 'order', to_version: 'v5.1.0', reason: 'r' },
      'order has no version "v5.1.0"',
    ],
    [
      'rollback_deploy',
      { service: 'shop', to_version: 'v1', reason: 'r' },
      'unknown service "shop"',
    ],
    [
      'rollback_deploy',
      { service: 'order', to_version: 'v2.13.2', reason: '' },
      'reason: must be >= 1',
    ],
    [
      'rollback_deploy',
      { service: 'order', to_version: 'v2.13.2', reason: 'r', force: true },
      'unknown argument force',
    ],
  ])('%s %j is refused', async (name, args, message) => {
    const observation = await call(ctx, name, args)
    expect(observation).toMatch(/^\[ToolError\] /)
    expect(observation).toContain(message)
  })

  it('does not roll back under "ask" without an approval', async () => {
    const asking = contextFor(demoTools, { policy: { mode: 'ask' } })
    expect(
      await call(asking, 'rollback_deploy', {
        service: 'order',
        to_version: 'v2.13.2',
        reason: 'r',
      }),
    ).toContain('rollback_deploy has side effects and is not permitted here (confirm policy "ask")')
  })

  it('marks every tool as a demo and only the rollback as a side effect', () => {
    expect(demoTools.map((t) => [t.name, t.sideEffect, t.idempotent])).toEqual([
      ['query_metrics', false, false],
      ['search_logs', false, false],
      ['read_repo_file', false, false],
      ['rollback_deploy', true, false],
    ])
    for (const tool of demoTools) expect(tool.description).toMatch(/^DEMO tool/)
  })
})
