/**
 * Runs the MCP conformance suite's client scenarios against edgeloop through the suite's own CLI
 * (one invocation per scenario) with client.ts as the client command and expected-failures.yml
 * as its baseline. The Worker is bundled once; CONFORMANCE_WORKERS hosts (host.ts, default 3)
 * each run one scenario's Worker at a time, so three scenarios run side by side.
 * Prints one line per scenario as it ends and `passed N/M`; exits non-zero when a scenario fails
 * that the baseline does not list, or passes while listed (the suite's own rule).
 *
 *   npm run conformance                  every client scenario
 *   npm run conformance -- sse-retry     the named ones
 */
import { execFile } from 'node:child_process'
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { bundleWorker } from '../worker-runtime.ts'
import { ConformanceHost } from './host.ts'

const root = join(import.meta.dirname, '..', '..', '..')
const cli = join(root, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js')
export const BASELINE = join(import.meta.dirname, 'expected-failures.yml')
const CLIENT = `${process.execPath} ${join(import.meta.dirname, 'client.ts')}`
const run = promisify(execFile)

export interface ScenarioResult {
  scenario: string
  passed: boolean
  /** Whether the result agrees with the baseline (a listed failure, or an unlisted pass). */
  asExpected: boolean
  /** The failed or warned checks' names and messages. */
  problems: string[]
}

/** The suite's client scenarios, as `conformance list` names them. */
export async function clientScenarios(): Promise<string[]> {
  const { stdout } = await run(process.execPath, [cli, 'list'], { cwd: root })
  const section = stdout.split(/^Client scenarios.*$/m)[1] ?? ''
  return [...section.matchAll(/^\s+- (\S+)/gm)].map((m) => m[1]!)
}

/** Runs one scenario through the suite's CLI against the host whose local API is `host`. */
export async function runScenario(scenario: string, host: string): Promise<ScenarioResult> {
  const out = await mkdtemp(join(tmpdir(), 'edgeloop-conformance-'))
  try {
    const args = [cli, 'client', '--command', CLIENT, '--scenario', scenario]
    args.push('--expected-failures', BASELINE, '-o', out, '--timeout', '60000')
    const asExpected = await run(process.execPath, args, {
      cwd: root,
      env: { ...process.env, EDGELOOP_CONFORMANCE_HOST: host },
      maxBuffer: 64 * 1024 * 1024,
    }).then(
      () => true,
      () => false,
    )
    // The suite writes <out>/<scenario>-<time>/checks.json (`auth/…` one folder deeper).
    const file = (await readdir(out, { recursive: true })).find((f) => f.endsWith('checks.json'))
    const checks = file
      ? (JSON.parse(await readFile(join(out, file), 'utf8')) as {
          name: string
          status: string
          errorMessage?: string
        }[])
      : []
    const problems = checks
      .filter((c) => c.status === 'FAILURE' || (c.status === 'WARNING' && !loadWarning(c)))
      .map((c) => `${c.status} ${c.name}: ${c.errorMessage ?? ''}`.trim())
    return { scenario, passed: checks.length > 0 && problems.length === 0, asExpected, problems }
  } finally {
    await rm(out, { recursive: true, force: true })
  }
}

/**
 * A warning is a problem like a failure, except the one the suite gives a client that waited the
 * server's `retry:` time and was then up to 200 ms slow to reconnect ("slightly late"): on a loaded
 * machine that is the scheduler, not the client. Waiting twice the time or more, or reconnecting
 * early, stays a FAILURE in the suite's own check.
 */
function loadWarning(check: { name: string; errorMessage?: string }): boolean {
  return check.name === 'ClientRespectsRetryField' && /slightly late/.test(check.errorMessage ?? '')
}

/** Every scenario (or the named ones), CONFORMANCE_WORKERS at a time; prints as each ends. */
export async function runConformance(only: string[] = []): Promise<ScenarioResult[]> {
  const worker = await bundleWorker()
  const scenarios = only.length ? only : await clientScenarios()
  const workers = Math.max(1, Number(process.env.CONFORMANCE_WORKERS ?? 3))
  const hosts = Array.from({ length: Math.min(workers, scenarios.length) }, () => {
    return new ConformanceHost(worker)
  })
  const results: ScenarioResult[] = new Array(scenarios.length)
  let next = 0
  try {
    await Promise.all(
      hosts.map(async (host) => {
        const api = await host.listen()
        while (next < scenarios.length) {
          const i = next++
          const result = await runScenario(scenarios[i]!, api)
          results[i] = result
          const mark = result.passed ? 'pass' : 'FAIL'
          const note = result.asExpected ? '' : '  (not as the baseline says)'
          console.log(`${mark} ${result.scenario}${note}`)
          for (const p of result.passed ? [] : result.problems) console.log(`     ${p}`)
        }
      }),
    )
  } finally {
    await Promise.all(hosts.map((h) => h.close()))
  }
  const passed = results.filter((r) => r.passed).length
  console.log(`passed ${passed}/${results.length}`)
  return results
}

if (import.meta.main) {
  const results = await runConformance(process.argv.slice(2))
  process.exitCode = results.every((r) => r.asExpected) ? 0 : 1
}
