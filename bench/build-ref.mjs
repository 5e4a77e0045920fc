// A build of edgeloop's Worker from a git ref, as a deploy bundles it: for the benches that set
// two builds side by side (bench/edgeloop-ab.mjs, bench/run-phases.mjs).
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const root = join(import.meta.dirname, '..')

/**
 * The Worker of `ref` bundled with `wrangler deploy --dry-run` from `git archive` of it (the work
 * tree's node_modules linked in), as a WorkerBuild of test/node/worker-runtime.ts; `.` is the
 * work tree as it is. `cleanup()` removes what it made.
 */
export async function buildOf(ref) {
  const { bundleWorker, runtimeSettings } = await import('../test/node/worker-runtime.ts')
  const here = { ...(await bundleWorker()), assets: undefined }
  if (ref === '.') return here
  const dir = mkdtempSync(join(tmpdir(), 'edgeloop-ab-'))
  execFileSync('sh', ['-c', `git archive ${JSON.stringify(ref)} | tar -x -C ${dir}`], { cwd: root })
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'))
  const out = join(dir, 'bundle')
  execFileSync(
    process.execPath,
    [join(root, 'node_modules/wrangler/bin/wrangler.js'), 'deploy', '--dry-run', '--outdir', out],
    { cwd: dir, stdio: 'ignore', env: { ...process.env, WRANGLER_SEND_METRICS: 'false' } },
  )
  const texts = readdirSync(out).filter((f) => f.endsWith('.md'))
  return {
    ...here,
    ...runtimeSettings(readFileSync(join(dir, 'wrangler.toml'), 'utf8')),
    assets: undefined,
    scriptPath: join(out, 'index.js'),
    modules: [
      { type: 'ESModule', path: join(out, 'index.js') },
      ...texts.map((f) => ({ type: 'Text', path: join(out, f) })),
    ],
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  }
}
