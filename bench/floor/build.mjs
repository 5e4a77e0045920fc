// The floor Worker of `npm run bench -- peer` (bench/floor/src/index.ts) bundled with esbuild as
// wrangler bundles edgeloop (the same build conditions, ES modules, minified, `cloudflare:` and
// `node:` imports left to workerd), and run with edgeloop's compatibility date and flags
// (wrangler.toml): `nodejs_compat` decides what the `openai` client loads on its first use.
// Three builds: the floor, the floor without the D1 run index, the floor with plain `fetch` to
// the model. docs/development.md#the-peer-bench.
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { build } from 'esbuild'

/** The floor and its two variants, by the name the bench prints. */
export const FLOOR_VARIANTS = {
  floor: { index: true, modelClient: 'openai' },
  'floor, no D1': { index: false, modelClient: 'openai' },
  'floor, plain fetch': { index: true, modelClient: 'fetch' },
}

/** Resolves the floor's `./model` import to model-fetch.ts. */
const modelWithFetch = (root) => ({
  name: 'floor-model-with-fetch',
  setup(b) {
    b.onResolve({ filter: /^\.\/model$/ }, () => ({
      path: join(root, 'bench/floor/src/model-fetch.ts'),
    }))
  },
})

/**
 * One variant of the floor (FLOOR_VARIANTS) as a WorkerBuild of test/node/worker-runtime.ts:
 * its bundle in a fresh temporary folder, `RUNS` bound to its `RunStore` (SQLite-backed) and,
 * unless the variant has none, the D1 database `RUN_INDEX`.
 */
export async function bundleFloor(root, variant = 'floor') {
  const { index, modelClient } = FLOOR_VARIANTS[variant]
  const outdir = mkdtempSync(join(tmpdir(), 'edgeloop-floor-'))
  const scriptPath = join(outdir, 'index.js')
  await build({
    entryPoints: [join(root, 'bench/floor/src/index.ts')],
    outfile: scriptPath,
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2024',
    // wrangler's defaults (getBuildConditions, its `define` of NODE_ENV), minify as deployed.
    conditions: ['workerd', 'worker', 'browser'],
    mainFields: ['browser', 'module', 'main'],
    external: ['cloudflare:*', 'node:*'],
    minify: true,
    define: { 'process.env.NODE_ENV': '"production"' },
    // As wrangler.toml's [alias] would: the plain-fetch variant's model call in place of the
    // client's, so its bundle holds no `openai` code at all.
    plugins: modelClient === 'fetch' ? [modelWithFetch(root)] : [],
    logLevel: 'error',
  })
  const { runtimeSettings } = await import('../../test/node/worker-runtime.ts')
  const { compatibilityDate, compatibilityFlags } = runtimeSettings(
    readFileSync(join(root, 'wrangler.toml'), 'utf8'),
  )
  return {
    scriptPath,
    modules: [{ type: 'ESModule', path: scriptPath }],
    compatibilityDate,
    compatibilityFlags,
    durableObjects: { RUNS: { className: 'RunStore', useSQLite: true } },
    d1Databases: index ? ['RUN_INDEX'] : [],
    kvNamespaces: [],
  }
}
