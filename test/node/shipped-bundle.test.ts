/**
 * The Worker as `wrangler deploy` bundles it (scripts/build.mjs, docs/development.md#the-build):
 * - the `openai` package and the MCP SDK as published (its OAuth client included): a run whose
 *   model streams through the fake, after a retried 500, calls a tool and an MCP server's tool
 *   (a real SDK server, test/fakes/fake-mcp.ts) with its bearer token, and finishes;
 * - the console's files as static assets, outside the script, served by the bundled Worker with
 *   its headers. test/events/console-page.test.ts checks the headers and contents in full.
 */
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ASSETS_DIR } from '../../scripts/console-assets.mjs'
import { FAKE_MCP_HOST, FAKE_MCP_TOKEN, FakeMcp } from '../fakes/fake-mcp'
import { FAKE_OPENAI_BASE_URL, FAKE_OPENAI_KEY, FakeOpenAI, reply } from '../fakes/fake-openai'
import { withRuntime } from './bundled-runtime'
import { bundleWorker } from './worker-runtime'

describe('the deployable bundle', () => {
  it('carries the packages whole; a run streams through the openai client and calls MCP', async () => {
    const worker = await bundleWorker()
    const script = await readFile(worker.scriptPath, 'utf8')
    // The packages as published: the whole openai client, the MCP SDK's OAuth client.
    expect(script).toContain('AssistantStream')
    expect(script).toContain('client_secret_basic')
    expect(script).not.toContain('is left out')

    const api = new FakeOpenAI().enqueue(
      reply.error(500, 'overloaded', { 'retry-after-ms': '1' }),
      reply.toolCalls([{ name: 'calculator', arguments: { expression: '6*7' } }]),
      reply.toolCalls([{ name: 'docs__search', arguments: { query: 'retries' } }]),
      reply.text('The answer is 42.'),
    )
    const mcp = new FakeMcp()
    await withRuntime(
      {
        worker,
        bindings: {
          API_TOKEN: 'bundle-token',
          WEBHOOK_SECRET: 'bundle-webhook-secret',
          OPENAI_API_KEY: FAKE_OPENAI_KEY,
          OPENAI_BASE_URL: FAKE_OPENAI_BASE_URL,
          MODEL: 'gpt-test',
          MODEL_PROTOCOL: 'native',
          MODEL_STREAM: 'on',
          MODEL_MAX_RETRIES: '1',
          CONFIRM_POLICY: 'allow',
          ENABLED_TOOLS: 'calculator',
          CPU_MS: '30000',
          MCP_SERVERS: JSON.stringify([
            { name: 'docs', url: `https://${FAKE_MCP_HOST}/mcp`, token_secret: 'DOCS_MCP_AUTH' },
          ]),
          DOCS_MCP_AUTH: FAKE_MCP_TOKEN,
        },
        outbound: async (req) => {
          const host = new URL(req.url).host
          if (host === 'api.openai.test') return api.handler(req)
          if (host === FAKE_MCP_HOST) return mcp.handler(req)
          return new Response('no such host', { status: 502 })
        },
      },
      async (rt) => {
        const auth = { authorization: 'Bearer bundle-token' }
        const started = await rt.fetch('/v1/runs', {
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/json' },
          body: JSON.stringify({ task: 'What is 6*7?' }),
        })
        expect(started.status).toBe(202)
        const { id } = (await started.json()) as { id: string }
        let view: { status: string; result?: { ok: boolean; answer: string } } = {
          status: 'running',
        }
        for (let i = 0; i < 200 && !['succeeded', 'failed'].includes(view.status); i++) {
          await new Promise((r) => setTimeout(r, 50))
          view = (await (await rt.fetch(`/v1/runs/${id}`, { headers: auth })).json()) as typeof view
        }
        expect(view).toMatchObject({
          status: 'succeeded',
          result: { ok: true, answer: 'The answer is 42.' },
        })
        expect(api.bodies).toHaveLength(4)
        expect(mcp.calls.map((c) => [c.tool, c.args])).toEqual([['search', { query: 'retries' }]])
        expect(mcp.authorizations).toContain(`Bearer ${FAKE_MCP_TOKEN}`)
        expect(api.bodies.every((b) => b.stream === true)).toBe(true)
        expect(api.untakenViolations()).toEqual([])
      },
    )
  })

  it('serves the console from static assets, not from its script', async () => {
    const worker = await bundleWorker()
    const script = await readFile(worker.scriptPath, 'utf8')
    const consoleScript = await readFile(join(ASSETS_DIR, 'console/console.js'), 'utf8')
    expect(script).not.toContain('sessionStorage.setItem(KEY, token)')
    expect(consoleScript).toContain('sessionStorage.setItem(KEY, token)')
    await withRuntime(
      {
        worker,
        bindings: { API_TOKEN: 'console-assets-token', MODEL: 'demo' },
        outbound: async () => new Response('no network', { status: 502 }),
      },
      async (rt) => {
        const res = await rt.fetch('/console/console.js')
        expect(res.status).toBe(200)
        expect(res.headers.get('content-type')).toBe('text/javascript; charset=utf-8')
        expect(res.headers.get('content-security-policy')).toContain("script-src 'self'")
        expect(await res.text()).toBe(consoleScript)
        const page = await rt.fetch('/console')
        expect(await page.text()).toBe(
          await readFile(join(ASSETS_DIR, 'console/index.html'), 'utf8'),
        )
        expect((await rt.fetch('/console/index.html')).status).toBe(404)
        expect((await rt.fetch('/console', { method: 'POST' })).status).toBe(405)
      },
    )
  })
})
