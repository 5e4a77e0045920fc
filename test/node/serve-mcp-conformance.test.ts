/**
 * The MCP conformance suite's server scenarios (`conformance server`) against /mcp of the Worker
 * as deployed: one Worker and one run of the suite for every scenario, measured against the
 * baseline (serve-mcp-conformance/expected-failures.yml), in which each scenario that does not
 * apply to a server of agents gives its reason. A scenario that fails unlisted, or passes while
 * listed, fails this test.
 */
import { execFile } from 'node:child_process'
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startMcpWorker, TOKENS, type McpWorker } from './serve-mcp/mcp-worker.ts'
import { bearerProxy } from './serve-mcp-conformance/proxy.ts'

const root = join(import.meta.dirname, '..', '..')
const CLI = join(root, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js')
const BASELINE = join(import.meta.dirname, 'serve-mcp-conformance', 'expected-failures.yml')
const run = promisify(execFile)

let worker: McpWorker
let proxy: Awaited<ReturnType<typeof bearerProxy>>

beforeAll(async () => {
  worker = await startMcpWorker()
  proxy = await bearerProxy(worker.url, TOKENS.alpha)
}, 120_000)
afterAll(async () => {
  await proxy?.close()
  await worker?.stop()
})

/** The suite's server scenarios, as `conformance list` names them. */
async function serverScenarios(): Promise<string[]> {
  const { stdout } = await run(process.execPath, [CLI, 'list'], { cwd: root })
  const section = stdout.split(/^Server scenarios.*$/m)[1]?.split(/^Client scenarios.*$/m)[0] ?? ''
  return [...section.matchAll(/^\s+- (\S+)/gm)].map((m) => m[1]!)
}

describe('MCP conformance suite, server scenarios', () => {
  it('every baseline entry names a server scenario of the suite and gives its reason', async () => {
    const scenarios = await serverScenarios()
    const entries = (await readFile(BASELINE, 'utf8')).split('\n').filter((l) => /^\s+- /.test(l))
    expect(entries.length).toBeGreaterThan(0)
    for (const line of entries) {
      const m = /^\s+- (\S+) # (.+)$/.exec(line)
      expect(m, `a reason for: ${line}`).not.toBeNull()
      expect(scenarios).toContain(m![1])
    }
  })

  it('fails only the scenarios the baseline lists', { timeout: 600_000 }, async () => {
    const out = await mkdtemp(join(tmpdir(), 'edgeloop-server-conformance-'))
    try {
      const url = `http://localhost:${proxy.port}/mcp`
      const args = [CLI, 'server', '--url', url, '--suite', 'all', '--expected-failures', BASELINE]
      args.push('-o', out)
      const agreed = await run(process.execPath, args, { cwd: root, maxBuffer: 64 << 20 }).then(
        () => ({ ok: true, output: '' }),
        (err: { stdout?: string; stderr?: string }) => ({
          ok: false,
          output: `${err.stdout ?? ''}\n${err.stderr ?? ''}`,
        }),
      )
      // Each scenario leaves <out>/server-<scenario>-<time>/checks.json.
      const results: Record<string, string[]> = {}
      for (const file of (await readdir(out, { recursive: true })).filter((f) =>
        f.endsWith('checks.json'),
      )) {
        const scenario = /server-(.+)-\d{4}-\d{2}-\d{2}T/.exec(file)?.[1] ?? file
        const checks = JSON.parse(await readFile(join(out, file), 'utf8')) as {
          name: string
          status: string
          errorMessage?: string
        }[]
        results[scenario] = checks
          .filter((c) => c.status === 'FAILURE')
          .map((c) => `${c.name}: ${c.errorMessage ?? ''}`)
      }
      expect(agreed.ok, agreed.output.slice(-4000)).toBe(true)
      // The core of a server of agents passes outright.
      for (const scenario of [
        'server-initialize',
        'ping',
        'tools-list',
        'logging-set-level',
        'dns-rebinding-protection',
        'server-sse-multiple-streams',
      ]) {
        expect(results[scenario], scenario).toEqual([])
      }
    } finally {
      await rm(out, { recursive: true, force: true })
    }
  })
})
