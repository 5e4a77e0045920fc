// The peer Worker of `npm run bench -- peer`: installed from its own lockfile (bench/peer/, a
// package of its own, never a dependency of edgeloop's Worker) and bundled by
// `wrangler deploy --dry-run`, as a deploy of it would be.
import { execFile } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'

const run = promisify(execFile)

/**
 * `npm ci` in bench/peer when its packages are missing or older than its lockfile, so a fresh
 * clone runs the bench with nothing installed by hand. Resolves to the pinned versions.
 */
export async function installPeer(root) {
  const dir = join(root, 'bench/peer')
  const lock = join(dir, 'package-lock.json')
  const installed = join(dir, 'node_modules/.package-lock.json')
  if (!existsSync(installed) || statSync(installed).mtimeMs < statSync(lock).mtimeMs) {
    const npm = process.env.npm_execpath
    const [cmd, args] = npm ? [process.execPath, [npm]] : ['npm', []]
    await run(
      cmd,
      [...args, 'ci', '--prefix', dir, '--ignore-scripts', '--no-audit', '--no-fund'],
      {
        cwd: root,
        maxBuffer: 16 << 20,
      },
    )
  }
  const { dependencies } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))
  return dependencies
}

/** The peer bundled as `wrangler deploy` would upload it, as a WorkerBuild (worker-runtime.ts). */
export async function bundlePeer(root) {
  const outdir = mkdtempSync(join(tmpdir(), 'edgeloop-peer-'))
  const wrangler = join(root, 'node_modules/wrangler/bin/wrangler.js')
  const config = join(root, 'bench/peer/wrangler.toml')
  try {
    await run(
      process.execPath,
      [wrangler, 'deploy', '--dry-run', '--outdir', outdir, '--config', config],
      {
        cwd: root,
        env: { ...process.env, WRANGLER_SEND_METRICS: 'false', WRANGLER_LOG: 'error' },
        maxBuffer: 16 << 20,
      },
    )
  } catch (err) {
    throw new Error(`bundling the peer failed: ${err.stderr || err.stdout || err.message}`)
  }
  const { runtimeSettings } = await import('../test/node/worker-runtime.ts')
  const scriptPath = join(outdir, 'index.js')
  return {
    scriptPath,
    modules: [{ type: 'ESModule', path: scriptPath }],
    ...runtimeSettings(readFileSync(config, 'utf8')),
  }
}
