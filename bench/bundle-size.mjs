// The deployable bundle as `wrangler deploy --dry-run --minify` builds it: minified and gzip sizes.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'

const GOAL_GZIP_KIB = 100

export function benchBundle(root) {
  const outdir = mkdtempSync(join(tmpdir(), 'edgeloop-bundle-'))
  try {
    const res = spawnSync(
      process.execPath,
      [
        join(root, 'node_modules/wrangler/bin/wrangler.js'),
        'deploy',
        '--dry-run',
        '--minify',
        '--outdir',
        outdir,
      ],
      { cwd: root, encoding: 'utf8', env: { ...process.env, WRANGLER_SEND_METRICS: 'false' } },
    )
    if (res.status !== 0)
      return `bundle: wrangler deploy --dry-run failed:\n${res.stderr || res.stdout}`
    let minified = 0
    let gzip = 0
    for (const file of readdirSync(outdir)) {
      if (!/\.(m?js|wasm)$/.test(file)) continue
      const bytes = readFileSync(join(outdir, file))
      minified += bytes.length
      gzip += gzipSync(bytes, { level: 9 }).length
    }
    const kib = (n) => (n / 1024).toFixed(1)
    return [
      'bundle (wrangler deploy --dry-run --minify, no nodejs_compat)',
      `  minified ${kib(minified)} KiB, gzip ${kib(gzip)} KiB; goal <= ${GOAL_GZIP_KIB} KiB gzip: ${gzip <= GOAL_GZIP_KIB * 1024 ? 'met' : 'NOT met'}`,
    ].join('\n')
  } finally {
    rmSync(outdir, { recursive: true, force: true })
  }
}
