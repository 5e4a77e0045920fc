// Runs bench/kernel.bench.ts under plain Node 20: bundles it with esbuild (no type stripping in
// Node 20) into a temporary module, imports it and prints the report.
import { build } from 'esbuild'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const dir = await mkdtemp(join(tmpdir(), 'edgeloop-bench-'))
try {
  const outfile = join(dir, 'kernel.bench.mjs')
  await build({
    entryPoints: [fileURLToPath(new URL('./kernel.bench.ts', import.meta.url))],
    outfile,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    logLevel: 'warning',
  })
  const { benchKernel } = await import(pathToFileURL(outfile).href)
  console.log(await benchKernel())
} finally {
  await rm(dir, { recursive: true, force: true })
}
