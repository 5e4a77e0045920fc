import { afterEach, describe, expect, it } from 'vitest'
import type { DispatchContext } from '../../src/kernel/dispatch'
import { createHttpPostTool } from '../../tools/http-post'
import { Outbound } from '../fakes/outbound'
import { call, contextFor } from './dispatch-context'

const ALLOW = ['hooks.allowed.test']
let outbound: Outbound

afterEach(() => outbound?.restore())

function post(args: Record<string, unknown>, overrides: Partial<DispatchContext> = {}) {
  const ctx = contextFor([createHttpPostTool({ allowlist: ALLOW, timeoutMs: 50 })], overrides)
  return call(ctx, 'http_post', args, 'call_7')
}

const created = () =>
  new Response('{"id":7}', { status: 201, headers: { 'content-type': 'application/json' } })

describe('http_post', () => {
  it('POSTs the JSON body with the call id as Idempotency-Key', async () => {
    outbound = new Outbound().on('hooks.allowed.test', created).install()
    const observation = await post({
      url: 'https://hooks.allowed.test/notify',
      body: { text: 'hi' },
    })
    expect(observation).toBe('HTTP 201 Created (application/json)\n\n{\n  "id": 7\n}')
    expect(outbound.requests).toEqual([
      {
        method: 'POST',
        url: 'https://hooks.allowed.test/notify',
        headers: expect.objectContaining({
          'content-type': 'application/json',
          'idempotency-key': 'r1:call_7',
        }),
        body: '{"text":"hi"}',
      },
    ])
  })

  it('is not executed under "ask" without an approval', async () => {
    outbound = new Outbound().on('hooks.allowed.test', created).install()
    const observation = await post(
      { url: 'https://hooks.allowed.test/notify', body: { text: 'hi' } },
      { policy: { mode: 'ask' } },
    )
    expect(observation).toBe(
      '[ToolError] http_post has side effects and is not permitted here (confirm policy "ask"). ' +
        'Use read-only tools instead, or ask the user for permission.',
    )
    expect(outbound.requests).toEqual([])
  })

  it('runs under "ask" once a person approved the call', async () => {
    outbound = new Outbound().on('hooks.allowed.test', created).install()
    const observation = await post(
      { url: 'https://hooks.allowed.test/notify', body: { text: 'hi' } },
      { policy: { mode: 'ask' }, approved: true },
    )
    expect(observation).toMatch(/^HTTP 201 Created/)
    expect(outbound.requests).toHaveLength(1)
    expect(outbound.requests[0]!.headers['idempotency-key']).toBe('r1:call_7')
  })

  it('only describes the call under "dry_run"', async () => {
    outbound = new Outbound().install()
    expect(
      await post(
        { url: 'https://hooks.allowed.test/notify', body: { text: 'hi' } },
        { policy: { mode: 'dry_run' } },
      ),
    ).toMatch(/^\[DryRun\] http_post was not run/)
    expect(outbound.requests).toEqual([])
  })

  it('reports a redirect without following it', async () => {
    outbound = new Outbound()
      .on(
        'hooks.allowed.test',
        () =>
          new Response(null, { status: 302, headers: { location: 'https://evil.test/collect' } }),
      )
      .install()
    expect(await post({ url: 'https://hooks.allowed.test/notify', body: {} })).toBe(
      'HTTP 302 Found (no content type)\n' +
        'Redirect to https://evil.test/collect was not followed (http_post never follows redirects)' +
        '\n\n(empty body)',
    )
    expect(outbound.to('evil.test')).toEqual([])
  })

  it('reports an error status as a result', async () => {
    outbound = new Outbound()
      .on(
        'hooks.allowed.test',
        () =>
          new Response('{"error":"bad channel"}', {
            status: 422,
            headers: { 'content-type': 'application/problem+json' },
          }),
      )
      .install()
    expect(await post({ url: 'https://hooks.allowed.test/notify', body: {} })).toBe(
      'HTTP 422 Unprocessable Content (application/problem+json)\n\n{\n  "error": "bad channel"\n}',
    )
  })

  it.each([
    [
      { url: 'https://evil.test/x', body: {} },
      'http_post: host evil.test is not in the allowlist (hooks.allowed.test)',
    ],
    [{ url: 'http://u:p@hooks.allowed.test/', body: {} }, 'credentials in the URL are not allowed'],
    [{ url: 'javascript:alert(1)', body: {} }, 'scheme "javascript:" is not allowed'],
    [
      { url: 'https://hooks.allowed.test/', body: 'text' },
      'invalid arguments for http_post:\n- body: expected record, got string',
    ],
    [{ url: 'https://hooks.allowed.test/', body: {}, method: 'PUT' }, 'unknown argument method'],
  ])('refuses %j without sending anything', async (args, message) => {
    outbound = new Outbound().install()
    const observation = await post(args)
    expect(observation).toMatch(/^\[ToolError\] /)
    expect(observation).toContain(message)
    expect(outbound.requests).toEqual([])
  })

  it('times out after its timeoutMs', async () => {
    outbound = new Outbound()
      .on('hooks.allowed.test', () => new Promise<Response>(() => {}))
      .install()
    expect(await post({ url: 'https://hooks.allowed.test/slow', body: {} })).toBe(
      '[ToolError] http_post timed out after 50ms; its outcome is unknown (it may have taken ' +
        'effect). Check its effect before retrying.',
    )
  })

  it('is side-effecting, and idempotent only when the deployment says the hosts deduplicate', () => {
    const plain = createHttpPostTool({ allowlist: ALLOW })
    expect([plain.sideEffect, plain.idempotent]).toEqual([true, false])
    const deduplicated = createHttpPostTool({ allowlist: ALLOW, idempotent: true })
    expect([deduplicated.sideEffect, deduplicated.idempotent]).toEqual([true, true])
  })
})
