// Where a fresh process's first run spends its CPU, against a warm run of the same process: the
// peer bench's task (bench/peer-cost.mjs) in workerd under `perf` (bench/workerd-perf.mjs), each
// sample's JavaScript frames of the bundle mapped back to their source files through the
// bundle's source map. It prints figures, no goal: `npm run bench -- peer` judges the first run;
// this says where its extra time goes (docs/development.md#the-peer-bench).
import { readFileSync } from 'node:fs'
import { SourceMap } from 'node:module'
import { dirname, relative, resolve } from 'node:path'
import { network, SYSTEMS, TASK_BINDINGS } from './peer-cost.mjs'
import {
  FREQUENCY,
  KINDS,
  OWNERS,
  perfStacks,
  perfUsable,
  stackKind,
  stackOwner,
  startPerfWorker,
} from './workerd-perf.mjs'
import { NO_MEASUREMENT } from './verdict.mjs'

/** Fresh workerd processes: each gives one first run and one warm run. */
const STARTS = Number(process.env.PROFILE_STARTS ?? 4)
/** Runs between the first and the profiled warm one. */
const WARMUP_RUNS = 3
/** Source files listed, by how much more of the first run than of a warm run they hold. */
const TOP_FILES = 20

/** V8 compiling a function on its first call (lazy compilation), wherever it was called from. */
const LAZY_COMPILE = /Runtime_CompileLazy|Compiler::Compile\b/
/** V8 compiling a regular expression the first time it runs. */
const REGEXP_COMPILE = /RegExpImpl::Compile|CompileIrregexp/

/** A frame of the bundle in V8's perf map: `JS:*name index.js:line:column`. */
const BUNDLE_FRAME = / index\.js:(\d+):(\d+)/

/** Maps a bundle position to the source file it came from, relative to the repository. */
function sourceFiles(root, scriptPath) {
  const mapPath = `${scriptPath}.map`
  const map = new SourceMap(JSON.parse(readFileSync(mapPath, 'utf8')))
  const known = new Map()
  return (line, column) => {
    const key = `${line}:${column}`
    if (!known.has(key)) {
      const entry = map.findEntry(line - 1, column - 1)
      const source = entry && 'originalSource' in entry ? entry.originalSource : undefined
      known.set(key, source ? relative(root, resolve(dirname(mapPath), source)) : undefined)
    }
    return known.get(key)
  }
}

/** Sample counts of one phase (first or warm) over every start. */
function tally() {
  return {
    samples: 0,
    compile: 0,
    regexp: 0,
    kinds: KINDS.map(() => 0),
    owners: OWNERS.map(() => 0),
    files: new Map(),
  }
}

/** Adds `perf script`'s stacks to `t`: each sample once per kind, owner and source file. */
function count(t, script, fileOf) {
  for (const stack of script.split(/\n\s*\n/)) {
    if (!stack.trim()) continue
    t.samples++
    if (LAZY_COMPILE.test(stack)) t.compile++
    if (REGEXP_COMPILE.test(stack)) t.regexp++
    t.kinds[stackKind(stack)]++
    t.owners[stackOwner(stack)]++
    const files = new Set()
    for (const frame of stack.split('\n')) {
      const at = BUNDLE_FRAME.exec(frame)
      const file = at && fileOf(Number(at[1]), Number(at[2]))
      if (file) files.add(file)
    }
    for (const file of files) t.files.set(file, (t.files.get(file) ?? 0) + 1)
  }
}

/** Profiles STARTS fresh processes' first runs and a warm run of each; the report's text. */
export async function benchFirstRunProfile(root) {
  if (!(await perfUsable()))
    return 'first-run profile: not measured (`perf record` is not usable here)'
  const { bundleWorker } = await import('../test/node/worker-runtime.ts')
  const fileOf = sourceFiles(root, (await bundleWorker()).scriptPath)
  const net = network()
  const first = tally()
  const warm = tally()
  const walls = { first: [], warm: [] }
  let n = 0
  for (let i = 0; i < STARTS; i++) {
    const { rt, stop } = await startPerfWorker((r) => net.outbound(r, 'edgeloop'), TASK_BINDINGS)
    try {
      const base = await rt.url()
      const run = (phase) => async () => {
        const t0 = performance.now()
        await SYSTEMS.edgeloop.run(base, net, `profile ${n++}`)
        walls[phase].push(performance.now() - t0)
      }
      count(first, await perfStacks(rt.pid, run('first')), fileOf)
      for (let w = 0; w < WARMUP_RUNS; w++) await SYSTEMS.edgeloop.run(base, net, `warm-up ${n++}`)
      count(warm, await perfStacks(rt.pid, run('warm')), fileOf)
    } finally {
      await stop()
    }
  }
  // perf attached too late or not at all: a profile of nothing is not printed as one.
  if (!first.samples || !warm.samples) {
    return `first-run profile: ${NO_MEASUREMENT} (perf took ${first.samples} samples of the first runs, ${warm.samples} of the warm runs)`
  }
  return report(first, warm, walls)
}

function report(first, warm, walls) {
  const ms = (samples) => (samples * 1000) / FREQUENCY / STARTS
  const row = (label, f, w) =>
    `  ${label.padEnd(58)} ${ms(f).toFixed(1).padStart(7)} ${ms(w).toFixed(1).padStart(7)} ${(ms(f) - ms(w)).toFixed(1).padStart(7)}`
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
  const lines = [
    `first-run profile: the peer bench's task, ${STARTS} fresh workerd processes, perf at ${FREQUENCY} Hz with V8's perf map`,
    `  (wall ms under perf, median: first ${median(walls.first).toFixed(0)}, warm ${median(walls.warm).toFixed(0)});`,
    `  workerd CPU ms per run as sampled:${' '.repeat(27)}first    warm   extra`,
    row('all of it', first.samples, warm.samples),
    row('V8 compiling functions on their first call', first.compile, warm.compile),
    row('V8 compiling regular expressions', first.regexp, warm.regexp),
    ...OWNERS.map((owner, i) => row(`by owner: ${owner}`, first.owners[i], warm.owners[i])),
    ...KINDS.map((kind, i) => row(`by kind: ${kind}`, first.kinds[i], warm.kinds[i])),
    `  source files of the bundle on the stack (a sample counts once per file), by extra:`,
  ]
  const extra = (file) => (first.files.get(file) ?? 0) - (warm.files.get(file) ?? 0)
  const files = [...first.files.keys()].sort((a, b) => extra(b) - extra(a)).slice(0, TOP_FILES)
  for (const file of files)
    lines.push(row(`  ${file}`, first.files.get(file), warm.files.get(file) ?? 0))
  return lines.join('\n')
}
