/**
 * `GET /console` through the Worker's fetch: the page, its script and its style are served with a
 * same-origin-only Content-Security-Policy and hold none of the server's secrets.
 * test/node/console.test.ts drives the same page in Chromium.
 */
import { env } from 'cloudflare:workers'
import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test'
import { describe, expect, it } from 'vitest'
import worker from '../../src/index'
import type { Env } from '../../src/env'
import { api, API_TOKEN, OPENAI_KEY, ORIGIN, WEBHOOK_SECRET } from '../service/harness'

const FILES = [
  ['/console', 'text/html'],
  ['/console/console.js', 'text/javascript'],
  ['/console/console.css', 'text/css'],
  ['/console/favicon.svg', 'image/svg+xml'],
] as const

describe('GET /console', () => {
  it.each(FILES)('serves %s as %s, same origin only, without a token', async (path, type) => {
    const res = await api(path)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe(`${type}; charset=utf-8`)
    const csp = res.headers.get('content-security-policy')!
    expect(csp).toContain("default-src 'none'")
    expect(csp).toContain("script-src 'self'")
    expect(csp).toContain("connect-src 'self'")
    expect(csp).toContain("frame-ancestors 'none'")
    expect(res.headers.get('x-content-type-options')).toBe('nosniff')
    const body = await res.text()
    for (const secret of [API_TOKEN, OPENAI_KEY, WEBHOOK_SECRET, 'test-signing-secret', 'xoxb-'])
      expect(body).not.toContain(secret)
  })

  it('loads its script from this origin (no inline script) and asks for the token', async () => {
    const html = await (await api('/console')).text()
    expect(html).toContain('<script src="/console/console.js" defer></script>')
    expect(html).not.toMatch(/<script>(?!<)/)
    expect(html).toContain('<form id="login"')
    expect(html).toMatch(/data-status="awaiting_approval"/)
    const script = await (await api('/console/console.js')).text()
    // The token lives in the tab's sessionStorage only; decisions send the hash shown, no "by".
    expect(script).toContain('sessionStorage.setItem(KEY, token)')
    expect(script).not.toContain('localStorage')
    expect(script).toContain('args_hash: a.argsHash')
    expect(script).not.toMatch(/\bby:/)
    // It asks who the token is (GET /v1/me) and offers what changes a run by the token's scopes;
    // test/node/console.test.ts checks a runs:read token sees no Approve, Deny or Cancel.
    expect(script).toContain("json('/v1/me')")
    expect(script).toContain("access.may('approvals:write')")
    expect(script).toContain("access.may('runs:write')")
    // Run data is set as text, never parsed as HTML.
    expect(script).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write/)
  })

  it('answers other methods with 405 and a trailing slash with 404', async () => {
    const post = await api('/console', { method: 'POST' })
    expect(post.status).toBe(405)
    expect(post.headers.get('allow')).toBe('GET, HEAD')
    expect((await api('/console/')).status).toBe(404)
    expect((await api('/console/other.js')).status).toBe(404)
  })

  it.each(FILES)(
    'a deployment without %s answers 404 in the error shape of every route',
    async (path) => {
      // The assets binding of a deployment built without the file: it answers 404, as Workers
      // static assets does for a file it does not have; the other files are there.
      const file = path === '/console' ? '/console/index.html' : path
      const assets = {
        fetch: (input: RequestInfo | URL, init?: RequestInit) => {
          const request = new Request(input, init)
          if (new URL(request.url).pathname === file)
            return Promise.resolve(new Response('Not Found', { status: 404 }))
          return env.ASSETS.fetch(request)
        },
      } as Fetcher
      const ctx = createExecutionContext()
      const res = await worker.fetch(
        new Request(`${ORIGIN}${path}`) as Request<unknown, IncomingRequestCfProperties>,
        { ...(env as Env), ASSETS: assets },
        ctx,
      )
      await waitOnExecutionContext(ctx)
      expect(res.status).toBe(404)
      expect(res.headers.get('content-type')).toMatch(/^application\/json/)
      expect(await res.json()).toEqual({
        error: {
          code: 'console_unavailable',
          message: expect.stringContaining(`static asset ${file} is missing`),
          details: { file },
        },
      })
    },
  )
})
