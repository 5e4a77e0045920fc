// The bundle exactly as `wrangler deploy` ships it: `wrangler deploy --dry-run --outdir` with no
// extra flags, so wrangler.toml (`minify = true`) decides. Counted: the modules it would upload
// (.js/.mjs/.wasm); not the source map (no `upload_source_maps`) nor the README it writes.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'

const GOAL_GZIP_KIB = 100

/** Builds the deployable bundle and returns a report: its sizes and whether the goal is met. */
export function benchBundle(root) {
  const outdir = mkdtempSync(join(tmpdir(), 'edgeloop-bundle-'))
  try {
    const res = spawnSync(
      process.execPath,
      [
        join(root, 'node_modules/wrangler/bin/wrangler.js'),
        'deploy',
        '--dry-run',
        '--outdir',
        outdir,
      ],
      { cwd: root, encoding: 'utf8', env: { ...process.env, WRANGLER_SEND_METRICS: 'false' } },
    )
    if (res.status !== 0) {
      return `FAIL bundle: wrangler deploy --dry-run failed:\n${res.stderr || res.stdout}`
    }
    let bytes = 0
    let gzip = 0
    const files = []
    for (const file of readdirSync(outdir)) {
      if (!/\.(m?js|wasm)$/.test(file)) continue
      const content = readFileSync(join(outdir, file))
      files.push(file)
      bytes += content.length
      gzip += gzipSync(content, { level: 9 }).length
    }
    const kib = (n) => (n / 1024).toFixed(1)
    const ok = gzip <= GOAL_GZIP_KIB * 1024
    return [
      `bundle as deployed (wrangler deploy --dry-run --outdir: ${files.join(', ')})`,
      `  ${kib(bytes)} KiB, gzip ${kib(gzip)} KiB; goal <= ${GOAL_GZIP_KIB} KiB gzip: ${ok ? 'met' : 'NOT met'}`,
    ].join('\n')
  } finally {
    rmSync(outdir, { recursive: true, force: true })
  }
}
