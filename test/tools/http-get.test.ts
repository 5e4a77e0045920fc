import { afterEach, describe, expect, it } from 'vitest'
import { createHttpGetTool } from '../../tools/http-get'
import { Outbound } from '../fakes/outbound'
import { call, contextFor } from './dispatch-context'

const ALLOW = ['docs.allowed.test', 'other.allowed.test', '*.wild.test']
let outbound: Outbound

afterEach(() => outbound?.restore())

function get(url: string, options: { maxBytes?: number; timeoutMs?: number } = {}) {
  const ctx = contextFor([createHttpGetTool({ allowlist: ALLOW, ...options })])
  return call(ctx, 'http_get', { url })
}

const json = (body: unknown, init: ResponseInit = {}) =>
  new Response(JSON.stringify(body), {
    ...init,
    headers: { 'content-type': 'application/json; charset=utf-8' },
  })
const text = (body: string, type = 'text/plain', init: ResponseInit = {}) =>
  new Response(body, { ...init, headers: { 'content-type': type } })

describe('http_get', () => {
  it('pretty-prints JSON under a status line', async () => {
    outbound = new Outbound()
      .on('docs.allowed.test', () => json({ ok: true, items: [1] }))
      .install()
    expect(await get('https://docs.allowed.test/api?q=1')).toBe(
      'HTTP 200 OK (application/json)\n\n{\n  "ok": true,\n  "items": [\n    1\n  ]\n}',
    )
    expect(outbound.requests).toMatchObject([
      { method: 'GET', url: 'https://docs.allowed.test/api?q=1' },
    ])
  })

  it('reduces HTML to readable text', async () => {
    const page =
      '<!doctype html><html><head><title>Pool &amp; limits</title><style>p{color:red}</style>' +
      '<script>alert("x")</script></head><body><h1>Pool   sizing</h1><!-- hidden -->' +
      '<p>Use&nbsp;at most <b>50</b> connections &mdash; not &lt;10&gt;.</p>' +
      '<ul><li>one</li><li>two&#39;s</li></ul></body></html>'
    outbound = new Outbound()
      .on('docs.allowed.test', () => text(page, 'text/html; charset=utf-8'))
      .install()
    expect(await get('https://docs.allowed.test/pool')).toBe(
      'HTTP 200 OK (text/html)\n\nPool & limits\n\nPool sizing\n\n' +
        "Use at most 50 connections — not <10>.\n\n- one\n- two's",
    )
  })

  it('returns other text as is, and a 404 as a result', async () => {
    outbound = new Outbound()
      .on('docs.allowed.test', () => text('no such page\n  here', 'text/plain', { status: 404 }))
      .install()
    expect(await get('https://docs.allowed.test/missing')).toBe(
      'HTTP 404 Not Found (text/plain)\n\nno such page\n  here',
    )
  })

  it('plain http only to hosts whose entry says http://', async () => {
    outbound = new Outbound().on('plain.allowed.test', () => text('over http')).install()
    const ctx = contextFor([
      createHttpGetTool({ allowlist: [...ALLOW, 'http://plain.allowed.test'] }),
    ])
    expect(await call(ctx, 'http_get', { url: 'http://plain.allowed.test/x' })).toBe(
      'HTTP 200 OK (text/plain)\n\nover http',
    )
    expect(await get('http://docs.allowed.test/x')).toContain(
      'plain http to docs.allowed.test is not allowed; use https://, or list the host as "http://docs.allowed.test"',
    )
    expect(outbound.requests).toHaveLength(1)
  })

  it('reaches any subdomain of a wildcard entry', async () => {
    outbound = new Outbound().on('a.b.wild.test', () => text('hi')).install()
    expect(await get('https://a.b.wild.test/')).toBe('HTTP 200 OK (text/plain)\n\nhi')
  })

  it.each([
    [
      'https://evil.test/x',
      'host evil.test is not in the allowlist (docs.allowed.test, other.allowed.test, *.wild.test)',
    ],
    ['https://wild.test/', 'host wild.test is not in the allowlist'],
    ['https://docs.allowed.test:8443/', 'host docs.allowed.test:8443 is not in the allowlist'],
    [
      'https://docs.allowed.test.evil.test/',
      'host docs.allowed.test.evil.test is not in the allowlist',
    ],
    ['ftp://docs.allowed.test/file', 'scheme "ftp:" is not allowed'],
    ['file:///etc/passwd', 'scheme "file:" is not allowed'],
    ['https://user:secret@docs.allowed.test/', 'credentials in the URL are not allowed'],
    ['docs.allowed.test/page', 'is not a valid URL; write an absolute https:// URL'],
  ])('refuses %s without sending anything', async (url, message) => {
    outbound = new Outbound().install()
    const observation = await get(url)
    // Refused by the tool's check, before anything is sent (or anyone asked).
    expect(observation).toMatch(/^\[ToolError\] http_get: /)
    expect(observation).toContain(message)
    expect(outbound.requests).toEqual([])
  })

  it('follows redirects inside the allowlist and says so', async () => {
    const redirect = (status: number, location: string) =>
      new Response(null, { status, headers: { location } })
    outbound = new Outbound()
      .on('docs.allowed.test', (req) =>
        new URL(req.url).pathname === '/v2'
          ? redirect(307, 'https://other.allowed.test/x')
          : redirect(301, '/v2'),
      )
      .on('other.allowed.test', (req) =>
        new URL(req.url).pathname === '/final' ? text('landed') : redirect(302, '/final'),
      )
      .install()
    expect(await get('https://docs.allowed.test/v1')).toBe(
      'HTTP 200 OK (text/plain)\n' +
        'Redirected (301) to https://docs.allowed.test/v2\n' +
        'Redirected (307) to https://other.allowed.test/x\n' +
        'Redirected (302) to https://other.allowed.test/final\n\nlanded',
    )
    expect(outbound.requests.map((r) => r.url)).toEqual([
      'https://docs.allowed.test/v1',
      'https://docs.allowed.test/v2',
      'https://other.allowed.test/x',
      'https://other.allowed.test/final',
    ])
  })

  it.each([
    ['https://evil.test/steal', 'host evil.test is not in the allowlist'],
    ['ftp://docs.allowed.test/x', 'scheme "ftp:" is not allowed'],
    ['https://u:p@other.allowed.test/', 'credentials in the URL are not allowed'],
  ])('refuses a redirect to %s and never requests it', async (location, reason) => {
    outbound = new Outbound()
      .on('docs.allowed.test', () => new Response(null, { status: 302, headers: { location } }))
      .install()
    const observation = await get('https://docs.allowed.test/a')
    expect(observation).toContain(
      `[ToolError] http_get failed: Error: https://docs.allowed.test/a redirected to ${location}, which was not followed: ${reason}`,
    )
    expect(outbound.requests.map((r) => r.url)).toEqual(['https://docs.allowed.test/a'])
  })

  it('stops after 5 redirects', async () => {
    let n = 0
    outbound = new Outbound()
      .on(
        'docs.allowed.test',
        () => new Response(null, { status: 302, headers: { location: `/r${++n}` } }),
      )
      .install()
    expect(await get('https://docs.allowed.test/r0')).toContain(
      'https://docs.allowed.test/r0 redirected more than 5 times (last to /r6); request the final URL directly',
    )
    expect(outbound.requests).toHaveLength(6)
  })

  it('cuts a long body at maxBytes and gives the declared total', async () => {
    outbound = new Outbound()
      .on(
        'docs.allowed.test',
        () =>
          new Response('x'.repeat(1000), {
            headers: { 'content-type': 'text/plain', 'content-length': '1000' },
          }),
      )
      .install()
    const observation = await get('https://docs.allowed.test/big', { maxBytes: 100 })
    expect(observation).toBe(
      `HTTP 200 OK (text/plain)\n\n${'x'.repeat(100)}\n\n[body cut at 100 bytes of 1000 (Content-Length); ` +
        'ask for a narrower resource (a smaller page, a query or a range) to see more]',
    )
  })

  it('stops reading an endless stream at maxBytes', async () => {
    let pulls = 0
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulls++
        controller.enqueue(new TextEncoder().encode('é'.repeat(32))) // 64 bytes a chunk
      },
    })
    outbound = new Outbound()
      .on(
        'docs.allowed.test',
        () => new Response(endless, { headers: { 'content-type': 'text/plain' } }),
      )
      .install()
    const observation = await get('https://docs.allowed.test/stream', { maxBytes: 101 })
    // 101 bytes end inside a two-byte character: the half character is dropped, not garbled.
    expect(observation).toBe(
      `HTTP 200 OK (text/plain)\n\n${'é'.repeat(50)}\n\n[body cut at 101 bytes; ask for a narrower ` +
        'resource (a smaller page, a query or a range) to see more]',
    )
    expect(pulls).toBeLessThan(5)
  })

  it.each([
    ['image/png', 'with image/png content, which is binary'],
    ['', 'with unknown binary content, which is binary'],
  ])('refuses binary content (%j)', async (type, message) => {
    const headers: Record<string, string> = type ? { 'content-type': type } : {}
    outbound = new Outbound()
      .on('docs.allowed.test', () => new Response(new Uint8Array([137, 80, 0, 71]), { headers }))
      .install()
    const observation = await get('https://docs.allowed.test/logo')
    expect(observation).toMatch(
      /^\[ToolError\] http_get failed: Error: https:\/\/docs.allowed.test\/logo answered HTTP 200 OK/,
    )
    expect(observation).toContain(message)
  })

  it('times out after its own timeoutMs and aborts the request', async () => {
    let seen: Request | undefined
    outbound = new Outbound()
      .on('docs.allowed.test', (req) => {
        seen = req
        return new Promise<Response>(() => {})
      })
      .install()
    expect(await get('https://docs.allowed.test/slow', { timeoutMs: 50 })).toBe(
      '[ToolError] http_get timed out after 50ms',
    )
    expect(seen?.signal.aborted).toBe(true)
  })

  it.each([
    [{ allowlist: [] }, 'http_get: the allowlist is empty'],
    [
      { allowlist: ['https://docs.allowed.test/docs'] },
      'allowlist entry "https://docs.allowed.test/docs" is not a host',
    ],
    [{ allowlist: ['ftp://docs.allowed.test'] }, 'is not a host'],
    [{ allowlist: ['*.test'] }, 'allowlist entry "*.test" is not a host'],
    [{ allowlist: ['docs.allowed.test/path'] }, 'is not a host'],
    [{ allowlist: ['docs.allowed.test'], maxBytes: 0 }, 'maxBytes must be a positive whole number'],
    [{ allowlist: ['docs.allowed.test'], timeoutMs: -1 }, 'timeoutMs must be a positive number'],
  ])('refuses bad options %j when built', (options, message) => {
    expect(() => createHttpGetTool(options)).toThrow(TypeError)
    expect(() => createHttpGetTool(options)).toThrow(message)
  })
})
