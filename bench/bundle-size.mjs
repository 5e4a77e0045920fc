// The bundle exactly as `wrangler deploy` ships it: `wrangler deploy --dry-run --outdir` with no
// extra flags, so wrangler.toml (`minify = true`) decides. Counted: the modules it would upload
// (.js/.mjs/.wasm); not the source map (no `upload_source_maps`) nor the README it writes.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { verdictLine } from './verdict.mjs'

// The limit: the platform's own, 3 MiB gzip on the Workers Free plan (10 MiB on Paid;
// developers.cloudflare.com/workers/platform/limits/#worker-size); a bigger Worker does not
// deploy. No self-set goal below it: no library feature is left out for bytes
// (docs/decisions.md#the-bundle-limit).
const LIMIT_GZIP_KIB = 3 * 1024
const PLATFORM = 'Workers Free plan limit 3 MiB gzip'
/** Contributors listed, largest first. */
const TOP = 10
// The MCP client's modules: the SDK and the packages only it needs, the cfworker validator, zod's
// classic API and locales (our code uses zod/mini and zod/v4/core), and src/mcp.
const MCP_INPUTS = new RegExp(
  '(^|/)(src/mcp/|node_modules/(@modelcontextprotocol|@cfworker|eventsource-parser|' +
    'content-type|pkce-challenge|zod/v4/classic|zod/v4/locales|zod/v3)/)',
)

/** Builds the deployable bundle and returns a report: its sizes and whether it is within the limit. */
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
        '--metafile',
        join(outdir, 'meta.json'),
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
    const meta = JSON.parse(readFileSync(join(outdir, 'meta.json'), 'utf8'))
    const mcp = mcpBytes(meta)
    const top = contributors(meta).slice(0, TOP)
    return [
      `bundle as deployed (wrangler deploy --dry-run --outdir: ${files.join(', ')})`,
      `  ${kib(bytes)} KiB minified, gzip ${kib(gzip)} KiB (${PLATFORM})`,
      verdictLine(
        { 'gzip bytes': gzip, 'MCP bytes': mcp },
        () => gzip <= LIMIT_GZIP_KIB * 1024,
        `bundle: gzip ${kib(gzip)} KiB as shipped, with MCP (the platform's limit ${LIMIT_GZIP_KIB} KiB)`,
      ),
      `  of which the MCP client: ${kib(mcp)} KiB minified (the SDK and what only it needs, ` +
        "the cfworker validator, zod's classic API, src/mcp; not the parts of zod's core it " +
        'shares with us)',
      `  top ${TOP} contributors, minified KiB (share of the minified bundle):`,
      ...top.map(
        ([name, n]) =>
          `    ${kib(n).padStart(6)}  ${((n / bytes) * 100).toFixed(1).padStart(4)}%  ${name}`,
      ),
    ].join('\n')
  } finally {
    rmSync(outdir, { recursive: true, force: true })
  }
}

/** Minified bytes the MCP client's modules put in the bundle (esbuild's bytesInOutput). */
function mcpBytes(meta) {
  let total = 0
  for (const output of Object.values(meta.outputs)) {
    for (const [path, input] of Object.entries(output.inputs ?? {})) {
      if (MCP_INPUTS.test(path)) total += input.bytesInOutput
    }
  }
  return total
}

/**
 * Minified bytes per contributor, largest first: a package (a scoped one whole; openai's and
 * zod's parts apart, as they are of different use to us) or a folder of ours.
 */
function contributors(meta) {
  const sizes = new Map()
  for (const output of Object.values(meta.outputs)) {
    for (const [path, input] of Object.entries(output.inputs ?? {})) {
      const dep = /node_modules\/((?:@[^/]+\/)?[^/]+)(?:\/(v4\/[^/]+|resources|lib))?/.exec(path)
      const name = dep
        ? dep[1] + (dep[2] ? `/${dep[2]}` : '')
        : path.split('/').slice(0, 2).join('/')
      sizes.set(name, (sizes.get(name) ?? 0) + input.bytesInOutput)
    }
  }
  return [...sizes].sort((a, b) => b[1] - a[1])
}
