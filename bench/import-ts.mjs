// Imports a TypeScript module under plain Node 20 (which cannot strip types): esbuild bundles it
// into a temporary ES module first. Used by the benchmark scripts only.
import { build } from 'esbuild'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

/** Bundles `tsPath` (relative to this folder) and imports it. */
export async function importTs(tsPath) {
  const dir = await mkdtemp(join(tmpdir(), 'edgeloop-bench-'))
  try {
    const entry = fileURLToPath(new URL(tsPath, import.meta.url))
    const outfile = join(dir, `${basename(entry, '.ts')}.mjs`)
    await build({
      entryPoints: [entry],
      outfile,
      bundle: true,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      logLevel: 'warning',
      // As wrangler.toml's Text rule: an agent's Markdown instructions are their text.
      loader: { '.md': 'text' },
    })
    return await import(pathToFileURL(outfile).href)
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}
