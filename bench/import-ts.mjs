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
    await bundleTs(entry, outfile)
    return await import(pathToFileURL(outfile).href)
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

// Node has no `cloudflare:workers` (see cloudflare-workers-node.mjs).
const workersModuleForNode = {
  name: 'cloudflare-workers-for-node',
  setup(build) {
    build.onResolve({ filter: /^cloudflare:workers$/ }, () => ({
      path: fileURLToPath(new URL('./cloudflare-workers-node.mjs', import.meta.url)),
    }))
  },
}

/**
 * Bundles the TypeScript module `entry` into the ES module `outfile` for Node. `requireShim`:
 * give the bundle a `require` (for packages that `require` Node built-ins from ES modules).
 */
export async function bundleTs(entry, outfile, { requireShim = false } = {}) {
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
    plugins: [workersModuleForNode],
    ...(requireShim
      ? {
          banner: {
            js: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
          },
        }
      : {}),
  })
}
