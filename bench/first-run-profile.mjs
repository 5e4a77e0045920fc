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
/** Functions listed the same way. */
const TOP_FUNCTIONS = 30

/** V8 compiling a function on its first call (lazy compilation), wherever it was called from. */
const LAZY_COMPILE = /Runtime_CompileLazy|Compiler::Compile\b/
/** V8 compiling a regular expression the first time it runs. */
const REGEXP_COMPILE = /RegExpImpl::Compile|CompileIrregexp/

/** A frame of the bundle in V8's perf map: `JS:*name index.js:line:column`. */
const BUNDLE_FRAME = / index\.js:(\d+):(\d+)/

/**
 * Maps a bundle position to where it came from: the source file (relative to the repository)
 * and, since V8's perf map names a function by where it starts, the function as
 * `file:line name` (`name` when the source map has one).
 */
export function sourcePlaces(root, scriptPath) {
  const mapPath = `${scriptPath}.map`
  const map = new SourceMap(JSON.parse(readFileSync(mapPath, 'utf8')))
  const known = new Map()
  return (line, column) => {
    const key = `${line}:${column}`
    if (!known.has(key)) {
      const entry = map.findEntry(line - 1, column - 1)
      const source = entry && 'originalSource' in entry ? entry.originalSource : undefined
      const file = source && relative(root, resolve(dirname(mapPath), source))
      known.set(
        key,
        file && {
          file,
          fn: `${file}:${entry.originalLine + 1}${entry.name ? ` ${entry.name}` : ''}`,
        },
      )
    }
    return known.get(key)
  }
}

/**
 * The source files and the functions of the bundle on one sample's stack (leaf first), each
 * once. A function's count is inclusive: it holds what it called, as far as the stack shows it
 * (after an `await`, a function resumes from the microtask queue without its callers).
 */
export function bundlePlaces(stack, placeOf) {
  const files = new Set()
  const functions = new Set()
  for (const frame of stack.split('\n')) {
    const at = BUNDLE_FRAME.exec(frame)
    const place = at && placeOf(Number(at[1]), Number(at[2]))
    if (!place) continue
    files.add(place.file)
    functions.add(place.fn)
  }
  return { files, functions }
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
    functions: new Map(),
  }
}

/** Adds `perf script`'s stacks to `t`: each sample once per kind, owner, file and function. */
function count(t, script, placeOf) {
  const add = (tally, key) => tally.set(key, (tally.get(key) ?? 0) + 1)
  for (const stack of script.split(/\n\s*\n/)) {
    if (!stack.trim()) continue
    t.samples++
    if (LAZY_COMPILE.test(stack)) t.compile++
    if (REGEXP_COMPILE.test(stack)) t.regexp++
    t.kinds[stackKind(stack)]++
    t.owners[stackOwner(stack)]++
    const { files, functions } = bundlePlaces(stack, placeOf)
    for (const file of files) add(t.files, file)
    for (const fn of functions) add(t.functions, fn)
  }
}

/** Profiles STARTS fresh processes' first runs and a warm run of each; the report's text. */
export async function benchFirstRunProfile(root) {
  if (!(await perfUsable()))
    return 'first-run profile: not measured (`perf record` is not usable here)'
  const { bundleWorker } = await import('../test/node/worker-runtime.ts')
  const placeOf = sourcePlaces(root, (await bundleWorker()).scriptPath)
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
      count(first, await perfStacks(rt.pid, run('first')), placeOf)
      for (let w = 0; w < WARMUP_RUNS; w++) await SYSTEMS.edgeloop.run(base, net, `warm-up ${n++}`)
      count(warm, await perfStacks(rt.pid, run('warm')), placeOf)
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
  const byExtra = (f, w, top) => {
    const extra = (key) => (f.get(key) ?? 0) - (w.get(key) ?? 0)
    const keys = [...f.keys()].sort((a, b) => extra(b) - extra(a)).slice(0, top)
    for (const key of keys) lines.push(row(`  ${key}`, f.get(key), w.get(key) ?? 0))
  }
  byExtra(first.files, warm.files, TOP_FILES)
  lines.push(
    `  functions of the bundle on the stack (where each starts; inclusive: a sample counts once per function), by extra:`,
  )
  byExtra(first.functions, warm.functions, TOP_FUNCTIONS)
  return lines.join('\n')
}
