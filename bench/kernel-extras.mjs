// What the kernel bench adds when run from `npm run bench`: cold figures from fresh processes,
// and the previous release's kernel built from git history (docs/architecture.md#performance).
import { execFileSync, spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { build } from 'esbuild'

/**
 * The previous release: the head that stop 30 landed and CI passed on (its kernel before the
 * agents, streaming and the FNV agent version). Changed when a newer release lands.
 */
export const PREVIOUS_RELEASE = '058fdc3c51ea78c02198cf8b3807f6d86a3a2546'

/**
 * Bundles the kernel bench once for the fresh processes the cold figures need, and the previous
 * release's kernel from `git archive` into a temporary folder (never a copy in the repository).
 * `cleanup()` removes both. Without git history (a shallow clone) the previous release is left
 * out and the report says so.
 */
export async function kernelExtras(root) {
  const dir = mkdtempSync(join(tmpdir(), 'edgeloop-kernel-'))
  const common = {
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    logLevel: 'warning',
    nodePaths: [join(root, 'node_modules')],
  }
  const benchFile = join(dir, 'kernel-bench.mjs')
  await build({ ...common, entryPoints: [join(root, 'bench/kernel.bench.ts')], outfile: benchFile })
  const previousFile = join(dir, 'previous-kernel.mjs')
  const extras = {
    cold: (c) => coldInFreshProcess(benchFile, previousFile, c),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  }
  try {
    const tree = join(dir, 'previous')
    execFileSync('mkdir', ['-p', tree])
    const tar = execFileSync('git', ['-C', root, 'archive', PREVIOUS_RELEASE, 'src'], {
      maxBuffer: 64 * 1024 * 1024,
    })
    writeFileSync(join(dir, 'previous.tar'), tar)
    execFileSync('tar', ['-xf', join(dir, 'previous.tar'), '-C', tree])
    const entry = join(tree, 'entry.ts')
    writeFileSync(entry, "export * from './src/kernel/index'\nexport * as z from 'zod/mini'\n")
    await build({ ...common, entryPoints: [entry], outfile: previousFile })
    const api = await import(pathToFileURL(previousFile).href)
    extras.previous = { label: `git ${PREVIOUS_RELEASE.slice(0, 7)}`, api }
  } catch (err) {
    extras.missing = `previous release ${PREVIOUS_RELEASE.slice(0, 7)} not built: ${err.message.split('\n')[0]}`
  }
  return extras
}

/**
 * One case's loop over its first steps, in a Node process of its own (`coldFigure`'s figures);
 * the previous release's kernel is imported there when the loop is `previous`.
 */
function coldInFreshProcess(benchFile, previousFile, c) {
  const previous =
    c.loop === 'previous'
      ? `await import(${JSON.stringify(pathToFileURL(previousFile).href)})`
      : 'undefined'
  const script =
    `const m = await import(${JSON.stringify(pathToFileURL(benchFile).href)});` +
    `console.log(JSON.stringify(await m.coldFigure(${JSON.stringify(c)}, ${previous})))`
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    let out = ''
    child.stdout.on('data', (d) => (out += d))
    child.on('error', reject)
    child.on('exit', (code) => {
      let figures
      try {
        figures = JSON.parse(out)
      } catch {
        figures = undefined
      }
      if (code === 0 && Number.isFinite(figures?.us)) resolve(figures)
      else reject(new Error(`cold ${JSON.stringify(c)}: exit ${code}, output ${out}`))
    })
  })
}
