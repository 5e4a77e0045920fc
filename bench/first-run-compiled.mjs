// How much code V8 compiles during a fresh process's first run, and whose: the peer bench's task
// (bench/peer-cost.mjs) in a workerd whose V8 logs its function events
// (`--log-function-events`, a log per isolate). V8 compiles a function fully on its first call
// (lazy compilation) and a runtime module when it is first loaded; the log names the script and
// the source range of each, which the bundle's source map turns into our files. Bytes of source
// compiled are a count, not a time: they do not move with the machine's load, so a change's
// effect on the first run's compiling reads exactly (docs/development.md#the-first-run-after-a-fresh-start).
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises'
import { SourceMap } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join, relative, resolve } from 'node:path'
import { network, SYSTEMS, TASK_BINDINGS } from './peer-cost.mjs'
import { NO_MEASUREMENT } from './verdict.mjs'
import { sleep, startBenchWorker } from './workerd-cpu.mjs'

/** The Worker's bundle as workerd names the script. */
const BUNDLE = 'index.js'
/** How long V8 gets to write a phase's events out before the log is read. */
const FLUSH_MS = 1500
/** Groups listed, by bytes compiled in the first run. */
const TOP_GROUPS = 25

/**
 * Bytes of source V8 compiled in `log` (a V8 log's text, or a stretch of one): each function
 * compiled on its first call (`parse-function`) and each script compiled whole (`parse-script`,
 * a runtime module loaded), each range once, by the group `groupOf(script, start)` names.
 */
export function compiledBytes(log, scriptNames, groupOf) {
  const groups = new Map()
  const seen = new Set()
  let bytes = 0
  let functions = 0
  for (const line of log.split('\n')) {
    const [kind, event, id, start, end] = line.split(',')
    if (kind !== 'function' || (event !== 'parse-function' && event !== 'parse-script')) continue
    const key = `${id},${start},${end}`
    if (seen.has(key)) continue
    seen.add(key)
    const size = Number(end) - Number(start)
    const group = groupOf(scriptNames.get(id) ?? `script ${id}`, Number(start))
    groups.set(group, (groups.get(group) ?? 0) + size)
    bytes += size
    functions++
  }
  return { bytes, functions, groups }
}

/** Script ids and their names, from a V8 log's `script-details` lines. */
export function scriptNames(log) {
  const names = new Map()
  for (const line of log.split('\n')) {
    const [kind, id, name] = line.split(',')
    if (kind === 'script-details' && name) names.set(id, name)
  }
  return names
}

/**
 * The group of a position in a script: for the bundle, its source's folder (`src/kernel`,
 * `node_modules/zod`, `tools`) through the source map; a runtime module is its own group.
 */
async function grouping(root, scriptPath) {
  const bundleText = await readFile(scriptPath, 'utf8')
  const mapPath = `${scriptPath}.map`
  const map = new SourceMap(JSON.parse(await readFile(mapPath, 'utf8')))
  const lineStarts = [0]
  for (let i = bundleText.indexOf('\n'); i !== -1; i = bundleText.indexOf('\n', i + 1)) {
    lineStarts.push(i + 1)
  }
  return (script, offset) => {
    if (script !== BUNDLE) return script
    let lo = 0
    let hi = lineStarts.length - 1
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1
      if (lineStarts[mid] <= offset) lo = mid
      else hi = mid - 1
    }
    const entry = map.findEntry(lo, offset - lineStarts[lo])
    if (!entry || !('originalSource' in entry)) return `${BUNDLE} (unmapped)`
    const parts = relative(root, resolve(dirname(mapPath), entry.originalSource)).split('/')
    if (parts[0] === 'node_modules') {
      return parts.slice(0, parts[1].startsWith('@') ? 3 : 2).join('/')
    }
    return parts.length > 2 ? parts.slice(0, 2).join('/') : parts[0]
  }
}

/** The Worker's isolate's log: of the logs holding the bundle, the one a run wrote most to. */
async function workerLog(dir, before) {
  let best
  for (const name of await readdir(dir)) {
    const path = join(dir, name)
    const grown = (await stat(path)).size - (before.get(path) ?? 0)
    if (!(await readFile(path, 'utf8')).includes(`,${BUNDLE},`)) continue
    if (!best || grown > best.grown) best = { path, grown }
  }
  return best?.path
}

async function sizes(dir) {
  const out = new Map()
  for (const name of await readdir(dir))
    out.set(join(dir, name), (await stat(join(dir, name))).size)
  return out
}

/** Runs the task twice in a fresh workerd with V8's function events logged; the report's text. */
export async function benchFirstRunCompiled(root) {
  const { bundleWorker } = await import('../test/node/worker-runtime.ts')
  const { scriptPath } = await bundleWorker()
  const groupOf = await grouping(root, scriptPath)
  const dir = await mkdtemp(join(tmpdir(), 'edgeloop-v8-log-'))
  const before = process.env.MINIFLARE_WORKERD_V8_FLAGS
  process.env.MINIFLARE_WORKERD_V8_FLAGS = `--log-function-events --logfile=${join(dir, 'v8.log')}`
  const net = network()
  try {
    const { rt, stop } = await startBenchWorker((r) => net.outbound(r, 'edgeloop'), TASK_BINDINGS)
    const marks = []
    try {
      const base = await rt.url()
      await sleep(FLUSH_MS)
      marks.push(await sizes(dir))
      await SYSTEMS.edgeloop.run(base, net, 'compiled first')
      await sleep(FLUSH_MS)
      marks.push(await sizes(dir))
      await SYSTEMS.edgeloop.run(base, net, 'compiled second')
      await sleep(FLUSH_MS)
    } finally {
      await stop()
    }
    const path = await workerLog(dir, marks[0])
    if (!path) return `first-run compiled code: ${NO_MEASUREMENT} (no V8 log holds ${BUNDLE})`
    const log = await readFile(path, 'utf8')
    const names = scriptNames(log)
    const [start, end] = [marks[0].get(path) ?? 0, marks[1].get(path) ?? 0]
    const phase = (from, to) => compiledBytes(log.slice(from, to), names, groupOf)
    return report(phase(0, start), phase(start, end), phase(end, log.length))
  } finally {
    if (before === undefined) delete process.env.MINIFLARE_WORKERD_V8_FLAGS
    else process.env.MINIFLARE_WORKERD_V8_FLAGS = before
    await rm(dir, { recursive: true, force: true })
  }
}

function report(startup, first, second) {
  if (!first.functions) {
    return `first-run compiled code: ${NO_MEASUREMENT} (V8 logged no compiling in the first run)`
  }
  const kb = (bytes) => (bytes / 1024).toFixed(1)
  const lines = [
    `first-run compiled code: the peer bench's task in a fresh workerd, V8's function events of the Worker's isolate`,
    `  source compiled: at startup ${kb(startup.bytes)} KiB (the bundle's top level and what V8 compiles eagerly);`,
    `  in the first run ${kb(first.bytes)} KiB in ${first.functions} functions and scripts; in the second run ${kb(second.bytes)} KiB in ${second.functions}`,
    `  the first run's, by source (KiB):`,
  ]
  const groups = [...first.groups].sort((a, b) => b[1] - a[1]).slice(0, TOP_GROUPS)
  for (const [group, bytes] of groups) lines.push(`  ${kb(bytes).padStart(8)}  ${group}`)
  return lines.join('\n')
}
