#!/usr/bin/env node
// `npm run sim`: the deterministic simulation of the run machine (docs/architecture.md#deterministic-simulation).
// Bundles test/node/sim/main.ts with `cloudflare:workers` aliased to the simulator's shim, then runs it.
import { build } from 'esbuild'
import { spawnSync } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const dir = process.env.SIM_KEEP_BUNDLE ?? (await mkdtemp(join(tmpdir(), 'edgeloop-sim-')))
const outfile = join(dir, 'sim.mjs')
try {
  await build({
    entryPoints: [join(root, 'test/node/sim/main.ts')],
    outfile,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node22',
    logLevel: 'warning',
    // Agents' Markdown instructions are text modules (wrangler's Text rule).
    loader: { '.md': 'text' },
    alias: {
      'cloudflare:workers': join(root, 'test/node/sim/cloudflare-workers.ts'),
      ajv: join(root, 'src/mcp/ajv-stub.ts'),
      'ajv-formats': join(root, 'src/mcp/ajv-stub.ts'),
    },
    banner: {
      js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
    },
  })
  const run = spawnSync(process.execPath, ['--no-warnings', outfile, ...process.argv.slice(2)], {
    stdio: 'inherit',
  })
  process.exitCode = run.status ?? 1
} finally {
  if (!process.env.SIM_KEEP_BUNDLE) await rm(dir, { recursive: true, force: true })
}
