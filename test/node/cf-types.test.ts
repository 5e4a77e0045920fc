/**
 * worker-configuration.d.ts (committed) is what `npm run cf-typegen` makes of wrangler.toml now,
 * and that command types only what wrangler.toml declares: a developer's .dev.vars never ends up
 * in the committed file.
 */
import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'
import { wranglerConfigWithoutDevVars } from '../../scripts/test-wrangler-config.mjs'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..')
const WRANGLER = join(ROOT, 'node_modules/wrangler/bin/wrangler.js')
const run = promisify(execFile)

/** The arguments `npm run cf-typegen` gives wrangler (package.json's script). */
function typegenArgs(): string[] {
  const scripts = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts
  const [command, ...args] = String(scripts['cf-typegen']).split(/\s+/)
  expect(command).toBe('wrangler')
  expect(args[0]).toBe('types')
  return args
}

const env = { ...process.env, WRANGLER_SEND_METRICS: 'false' }
const work = mkdtempSync(join(tmpdir(), 'edgeloop-cf-types-'))
afterAll(() => rmSync(work, { recursive: true, force: true }))

describe('npm run cf-typegen', () => {
  it('has written the committed worker-configuration.d.ts from the current wrangler.toml', async () => {
    const result = await run(process.execPath, [WRANGLER, ...typegenArgs(), '--check'], {
      cwd: ROOT,
      env,
    }).catch((err: { code: number; stderr: string }) => err)
    expect(
      'code' in result ? result.stderr : '',
      'worker-configuration.d.ts is stale: run `npm run cf-typegen` and commit it',
    ).toBe('')
  }, 60_000)

  it('types the bindings and [vars] of wrangler.toml, never the names in .dev.vars', async () => {
    // A wrangler.toml copy with a .dev.vars beside it, as a developer's clone has.
    const config = join(work, 'wrangler.toml')
    writeFileSync(config, readFileSync(wranglerConfigWithoutDevVars(), 'utf8'))
    writeFileSync(join(work, '.dev.vars'), 'LOCAL_ONLY_SECRET=x\nAPI_TOKEN=dev-token\n')
    const out = join(work, 'types.d.ts')
    // The path right after `types`: --env-file takes every word after it.
    const [types, ...options] = typegenArgs()
    const args = [types!, out, ...options, '--config', config, '--include-runtime=false']
    await run(process.execPath, [WRANGLER, ...args], { cwd: ROOT, env })
    const generated = readFileSync(out, 'utf8')
    const names = [...generated.matchAll(/^\t(\w+): /gm)].map((m) => m[1])
    expect(names.sort()).toEqual([
      'ASSETS',
      'CONFIRM_POLICY',
      'CPU_MS',
      'OAUTH_KV',
      'RUNS',
      'RUN_INDEX',
      'RUN_LIST',
      'SLACK_THREADS',
    ])
    expect(generated).toContain('interface WranglerEnv ')
  }, 60_000)
})
