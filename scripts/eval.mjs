#!/usr/bin/env node
// `npm run eval`: evaluates the agents' cases (docs/evals.md). Bundles scripts/eval-main.ts with
// every eval file (agents/*.eval.ts, agents/*.recorded.eval.json) as the `eval-files` module,
// then runs it. EVAL_FILES_DIR reads the eval files from another folder (the tests use it).
import { build } from 'esbuild'
import { spawnSync } from 'node:child_process'
import { mkdir, readdir, readFile, rm } from 'node:fs/promises'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const filesDir = resolve(process.env.EVAL_FILES_DIR ?? join(root, 'agents'))
// Inside the repository, so that the packages left out of the bundle resolve from node_modules.
const outdir = join(root, 'node_modules', '.cache', 'edgeloop-eval', String(process.pid))
const outfile = join(outdir, 'eval.mjs')

const names = (await readdir(filesDir))
  .filter((f) => f.endsWith('.eval.ts') || f.endsWith('.recorded.eval.json'))
  .sort()
const evalFiles = {
  name: 'eval-files',
  setup(b) {
    b.onResolve({ filter: /^eval-files$/ }, () => ({ path: 'eval-files', namespace: 'eval-files' }))
    b.onLoad({ filter: /.*/, namespace: 'eval-files' }, () => ({
      resolveDir: filesDir,
      loader: 'js',
      contents: [
        ...names.map((f, i) => `import * as m${i} from ${JSON.stringify(join(filesDir, f))}`),
        'export default [',
        ...names.map(
          (f, i) =>
            `  { file: ${JSON.stringify(relative(root, join(filesDir, f)))}, value: ${f.endsWith('.json') ? `m${i}.default` : `m${i}.default ?? Object.values(m${i})[0]`} },`,
        ),
        ']',
      ].join('\n'),
    }))
  },
}
// A bundled module's import.meta.dirname would be the bundle's folder: each file gets its own.
const ownDirname = {
  name: 'own-dirname',
  setup(b) {
    b.onLoad({ filter: /\/test\/node\/.*\.ts$/ }, async (args) => ({
      loader: 'ts',
      contents: (await readFile(args.path, 'utf8')).replaceAll(
        'import.meta.dirname',
        JSON.stringify(dirname(args.path)),
      ),
    }))
  },
}

await mkdir(outdir, { recursive: true })
try {
  await build({
    entryPoints: [join(root, 'scripts/eval-main.ts')],
    outfile,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    logLevel: 'warning',
    // Agents' Markdown instructions are text modules (wrangler's Text rule).
    loader: { '.md': 'text' },
    plugins: [evalFiles, ownDirname],
  })
  const run = spawnSync(process.execPath, ['--no-warnings', outfile, ...process.argv.slice(2)], {
    stdio: 'inherit',
    env: { ...process.env, EDGELOOP_ROOT: root, EVAL_FILES_DIR: filesDir },
  })
  process.exitCode = run.status ?? 2
} catch {
  // esbuild printed the file and line (a case file that does not compile, say).
  process.exitCode = 2
} finally {
  await rm(outdir, { recursive: true, force: true })
}
