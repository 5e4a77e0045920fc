/**
 * @edgeloop/client as a user gets it: packed as `npm run client:pack` packs it, installed from
 * the tarball into a fresh project with no network, the example of docs/client.md typechecked
 * with `"module": "nodenext"` and run against a real `wrangler dev` under Node 20 and Node 24,
 * and the built modules loaded in Chromium.
 */
import { execFile, execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { chromium } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type * as Client from '../../src/client'
import { startWranglerDev } from '../../bench/wrangler-dev.mjs'
import { wranglerConfigWithoutDevVars } from '../../scripts/test-wrangler-config.mjs'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..')
const TOKEN = 'client-package-token'
const NODE_24 = join(ROOT, 'node_modules/node/bin/node')
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const run = promisify(execFile)

/** A Node 20 beside the pinned 24 (NODE20_PATH, else the system's), or undefined. */
function findNode20(): string | undefined {
  const candidates = [
    process.env.NODE20_PATH,
    '/usr/local/bin/node',
    '/usr/bin/node',
    ...(process.env.PATH ?? '').split(':').map((dir) => join(dir, 'node')),
  ]
  for (const path of candidates) {
    if (!path || !existsSync(path)) continue
    if (execFileSync(path, ['--version'], { encoding: 'utf8' }).startsWith('v20.')) return path
  }
  return undefined
}

/** The first ```ts block of docs/client.md: the example, as a user copies it. */
function documentedExample(): string {
  const doc = readFileSync(join(ROOT, 'docs/client.md'), 'utf8')
  const block = /```ts\n([\s\S]*?)```/.exec(doc)
  if (!block) throw new Error('docs/client.md has no ```ts example')
  return block[1]!
}

const node20 = findNode20()
if (!node20) console.warn('test/node/client-package.test.ts: no Node 20 found (set NODE20_PATH)')
const runtimes = [
  { label: 'Node 24', node: NODE_24 },
  ...(node20 ? [{ label: 'Node 20', node: node20 }] : []),
]

describe('@edgeloop/client from its packed tarball', () => {
  let work: string
  let project: string
  let dev: Awaited<ReturnType<typeof startWranglerDev>>

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'edgeloop-client-'))
    const starting = startWranglerDev(
      ROOT,
      { API_TOKEN: TOKEN, API_TOKENS: '', MODEL: 'demo', OPENAI_API_KEY: '', ENABLED_TOOLS: '' },
      { config: wranglerConfigWithoutDevVars() },
    )
    // The same command as `npm run client:pack` (its prepack builds the package first).
    await run('npm', ['pack', './packages/client', '--pack-destination', work], { cwd: ROOT })
    project = join(work, 'project')
    await run('mkdir', [project])
    writeFileSync(
      join(project, 'package.json'),
      JSON.stringify({ name: 'throwaway', private: true, type: 'module' }),
    )
    const tarball = readdirSync(work).find((f) => f.endsWith('.tgz'))!
    await run(
      'npm',
      ['install', join(work, tarball), '--offline', '--no-audit', '--no-fund', '--loglevel=error'],
      { cwd: project },
    )
    writeFileSync(join(project, 'example.ts'), documentedExample())
    dev = await starting
  }, 180_000)

  afterAll(() => {
    dev?.stop()
    if (work) rmSync(work, { recursive: true, force: true })
  })

  it('installs built ES modules and declarations that import only each other', () => {
    const installed = join(project, 'node_modules/@edgeloop/client')
    const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8'))
    expect(manifest.dependencies ?? {}).toEqual({})
    expect(manifest.exports['.']).toEqual({
      types: './dist/index.d.ts',
      default: './dist/index.js',
    })
    const files = readdirSync(join(installed, 'dist'))
    expect(files.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))).toEqual([])
    expect(files).toContain('index.js')
    expect(files).toContain('index.d.ts')
    for (const file of files) {
      const text = readFileSync(join(installed, 'dist', file), 'utf8')
      const specifiers = [...text.matchAll(/\bfrom '([^']+)'/g)].map((m) => m[1]!)
      for (const specifier of specifiers) expect(specifier, file).toMatch(/^\.\/[\w-]+\.js$/)
    }
  })

  it('typechecks the documented example with "module": "nodenext"', async () => {
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'es2022',
          module: 'nodenext',
          moduleResolution: 'nodenext',
          strict: true,
          // A Node project's own @types/node (borrowed from the clone: the install is offline).
          types: ['node'],
          typeRoots: [join(ROOT, 'node_modules/@types')],
        },
        files: ['example.ts'],
      }),
    )
    const tsc = join(ROOT, 'node_modules/typescript/bin/tsc')
    const result = await run(NODE_24, [tsc, '-p', 'tsconfig.json'], { cwd: project }).catch(
      (err: { stdout: string }) => err,
    )
    expect(result.stdout).toBe('')
    expect(existsSync(join(project, 'example.js'))).toBe(true)
  }, 60_000)

  it.each(runtimes)(
    'runs the example under $label: a run, its approval decided, its end',
    async ({ node }) => {
      const env = { ...process.env, EDGELOOP_URL: dev.baseUrl, API_TOKEN: TOKEN }
      const { stdout } = await run(node, ['example.js'], { cwd: project, env })
      expect(stdout).toMatch(/^step 1: /m)
      expect(stdout).toMatch(/^wants rollback_deploy \{"service":"order"/m)
      expect(stdout).toMatch(/^finished: .*max_connections/m)
      expect(stdout).toMatch(/^steps \d+ stop finish$/m)
      // The legacy API_TOKEN holds every scope.
      expect(stdout).toMatch(/^token api runs:write runs:read approvals:write\b/m)
      expect(stdout).toMatch(/^cancel: 409 run_finished$/m)
    },
    60_000,
  )

  it('runs the example.ts itself under Node 24 (its types stripped)', async () => {
    const env = { ...process.env, EDGELOOP_URL: dev.baseUrl, API_TOKEN: TOKEN }
    const { stdout } = await run(NODE_24, ['example.ts'], { cwd: project, env })
    expect(stdout).toMatch(/^finished: .*max_connections/m)
  }, 60_000)

  it.skipIf(!existsSync(CHROMIUM))(
    'works in Chromium, from the installed modules',
    async () => {
      const dist = join(project, 'node_modules/@edgeloop/client/dist')
      const browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
      })
      try {
        const page = await browser.newPage()
        // The page and the modules come from the service's own origin, as a page the Worker (or
        // a site behind the same host) serves would: no cross-origin request.
        await page.route(`${dev.baseUrl}/__client/**`, (route) => {
          const file = new URL(route.request().url()).pathname.replace('/__client/', '')
          if (file === 'page.html') {
            // A page that loads the client as pages do: a module script.
            const body = `<!doctype html><script type="module">
            import * as client from './index.js'
            window.edgeloopClient = client
          </script>`
            return route.fulfill({ contentType: 'text/html', body })
          }
          return route.fulfill({
            contentType: 'text/javascript',
            body: readFileSync(join(dist, file.replace(/[^\w.-]/g, '')), 'utf8'),
          })
        })
        await page.goto(`${dev.baseUrl}/__client/page.html`)
        await page.waitForFunction(() => 'edgeloopClient' in globalThis)
        const seen = await page.evaluate(
          async ({ base, token }) => {
            const { EdgeloopClient } = (globalThis as any).edgeloopClient as typeof Client
            const edgeloop = new EdgeloopClient({ baseUrl: base, token })
            const { id } = await edgeloop.startRun({ task: 'In a browser' })
            const types: string[] = []
            for await (const event of edgeloop.events(id)) {
              types.push(event.type)
              if (event.type === 'approval_requested') {
                const { callId, argsHash } = event.data
                await edgeloop.decide(id, callId, { decision: 'deny', argsHash })
              }
            }
            return { types, status: (await edgeloop.getRun(id)).status }
          },
          { base: dev.baseUrl, token: TOKEN },
        )
        expect(seen.types).toContain('approval_decided')
        expect(seen.types.at(-1)).toBe('run_finished')
        expect(seen.status).toBe('succeeded')
      } finally {
        await browser.close()
      }
    },
    60_000,
  )
})
