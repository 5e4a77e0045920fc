// Where the workerd process's CPU goes, by kind of work, from Linux `perf` samples with call
// stacks. The service-cost bench charges a run the whole process's CPU; this says how much of it
// is what only local workerd does (SQLite files committed on this machine's disk, a database file
// created per new Durable Object, HTTP over loopback to the fakes and to Miniflare's own workers)
// and how much is JavaScript. Optional: without `perf`, or where the kernel refuses it
// (perf_event_paranoid), the bench says so and goes on. docs/architecture.md#performance.
import { execFile, spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { sleep, startBenchWorker } from './workerd-cpu.mjs'

/** Samples per second: enough for a few thousand over a batch of runs. */
export const FREQUENCY = 2000
/**
 * How long perf gets to attach before the work starts: at a load of 15 on 2 cores, 400 ms
 * missed about half of a first run's samples.
 */
const PERF_ATTACH_MS = 1500

/**
 * The kinds. A sample belongs to the kind of the innermost frame of its stack that names one
 * (walking from the sampled instruction outwards): JavaScript called from inside an HTTP request
 * is JavaScript, a write(2) made by SQLite is SQLite. Storage work whose stack also holds a
 * commit, the VFS or a database being opened counts as committing to the local disk.
 */
export const KINDS = [
  'SQLite commits, files and syscalls (local disk)',
  'SQLite statements',
  'garbage collection',
  'compiling JavaScript',
  'running JavaScript and the runtime APIs it calls',
  'HTTP and RPC plumbing (kj)',
  'kernel (sockets, scheduling)',
  'other workerd work (promises, I/O contexts, locks)',
]
const [COMMITS, STATEMENTS, GC, COMPILE, JS, HTTP, KERNEL, OTHER] = KINDS.map((_, i) => i)

/** The kind a single frame names, or undefined. `last`: the stack's outermost frame. */
function frameKind(frame, last) {
  if (frame.includes('sqlite3')) return STATEMENTS
  if (/v8::internal::(Heap::|Scavenge|MarkCompact|GCTracer)|cppgc::/.test(frame)) return GC
  if (/v8::internal::(Compiler|Parser|maglev|compiler::|baseline::)/.test(frame)) return COMPILE
  // Code V8 generated: named from V8's perf map (V8_PERF_FLAGS), else an address in no object.
  if (/Builtins_|v8::|jsg::| (JS|Script):/.test(frame) || (!last && frame.endsWith('([unknown])')))
    return JS
  if (/kj::(Http|AsyncIoStream|.*Socket)|HttpService|capnp::|AsyncStreamFd/.test(frame)) return HTTP
  return undefined
}

/** The kind of one sample's stack (leaf first, one frame per line). */
export function stackKind(stack) {
  const frames = stack.split('\n').filter((f) => /\S/.test(f))
  for (let i = 0; i < frames.length; i++) {
    const kind = frameKind(frames[i], i === frames.length - 1)
    if (kind === STATEMENTS && /[Cc]ommit|Vfs|sqlite3_open|openDatabase/.test(stack)) return COMMITS
    if (kind !== undefined) return kind
  }
  return frames[0]?.includes('[kernel') ? KERNEL : OTHER
}

/**
 * Whose JavaScript a sample is in, when workerd runs with V8's perf map (`V8_PERF_FLAGS`): the
 * innermost frame of a named script decides. The Worker's bundle is `index.js`; its isolate also
 * runs the runtime's `cloudflare:` modules (the D1 binding's client among them); Miniflare's own
 * workers (the entry worker every request passes, the D1 simulator, the outbound service) are
 * `*.worker.js`, `miniflare:` and `core:` scripts. Modules every isolate has
 * (`workerd:per-isolate/…`, `node:…`) decide nothing on their own.
 */
export const OWNERS = [
  'the Worker (its isolate)',
  "Miniflare's workers",
  'JavaScript of no one script (runtime modules)',
  'no JavaScript on the stack',
]
const [WORKER, MINIFLARE, SHARED, NO_JS] = OWNERS.map((_, i) => i)

/** The owner of one sample's stack (leaf first). */
export function stackOwner(stack) {
  let internal = false
  let js = false
  for (const frame of stack.split('\n')) {
    const script = /(?:JS|Script):\S* (\S+?)(?::\d+:\d+)?(?:\+0x[0-9a-f]+)? \(/.exec(frame)?.[1]
    if (!script) continue
    if (script === 'index.js' || script.startsWith('cloudflare:')) return WORKER
    if (/\.worker\.js$|^miniflare:|^core:/.test(script)) return MINIFLARE
    internal ||= script.startsWith('cloudflare-internal:')
    js = true
  }
  // The D1 binding's client resumed from a promise has no bundle frame above it: still ours.
  if (internal) return WORKER
  return js ? SHARED : NO_JS
}

/** V8 flags that make workerd write the perf map `stackOwner` reads (set before it starts). */
export const V8_PERF_FLAGS = '--perf-basic-prof --interpreted-frames-native-stack'

/**
 * startBenchWorker (bench/workerd-cpu.mjs) in a workerd that writes V8's perf map, so that
 * `stackOwner` can tell whose JavaScript a sample is in.
 */
export async function startPerfWorker(outbound, bindings) {
  const before = process.env.MINIFLARE_WORKERD_V8_FLAGS
  process.env.MINIFLARE_WORKERD_V8_FLAGS = V8_PERF_FLAGS
  try {
    return await startBenchWorker(outbound, bindings)
  } finally {
    if (before === undefined) delete process.env.MINIFLARE_WORKERD_V8_FLAGS
    else process.env.MINIFLARE_WORKERD_V8_FLAGS = before
  }
}

/** Whether `perf record` can sample a process of ours here. */
export async function perfUsable() {
  try {
    await promisify(execFile)('perf', ['record', '-e', 'cpu-clock', '-o', '/dev/null', 'true'])
    return true
  } catch {
    return false
  }
}

/**
 * Samples process `pid` while `work()` runs: the counts of `classify` and the process's CPU in
 * ms as the samples measure it (cpu-clock, FREQUENCY a second of CPU).
 */
export async function perfShares(pid, work) {
  const counted = classify(await perfStacks(pid, work))
  return { ...counted, cpuMs: (counted.samples * 1000) / FREQUENCY }
}

/**
 * `perf script`'s text of the samples of process `pid` taken while `work()` runs: stacks (leaf
 * first, one frame per line) separated by blank lines, FREQUENCY samples a second of CPU.
 */
export async function perfStacks(pid, work) {
  const dir = await mkdtemp(join(tmpdir(), 'edgeloop-perf-'))
  const data = join(dir, 'perf.data')
  try {
    const rec = spawn(
      'perf',
      [
        'record',
        '-q',
        '-e',
        'cpu-clock',
        '-F',
        String(FREQUENCY),
        '-g',
        '-p',
        String(pid),
        '-o',
        data,
      ],
      { stdio: 'ignore' },
    )
    const exited = new Promise((resolve) => rec.on('exit', resolve))
    // perf needs a moment to attach before the first sample (longer on a loaded machine).
    await sleep(PERF_ATTACH_MS)
    try {
      await work()
    } finally {
      rec.kill('SIGINT')
      await exited
    }
    const { stdout } = await promisify(execFile)(
      'perf',
      ['script', '-i', data, '-F', 'ip,sym,dso'],
      {
        maxBuffer: 1 << 30,
      },
    )
    return stdout
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

/**
 * Counts `perf script` samples (blank-line separated stacks) by kind and by owner; `shares` and
 * `owners` are fractions of all samples.
 */
export function classify(script) {
  const kinds = KINDS.map(() => 0)
  const owners = OWNERS.map(() => 0)
  let samples = 0
  for (const stack of script.split(/\n\s*\n/)) {
    if (!stack.trim()) continue
    samples++
    kinds[stackKind(stack)]++
    owners[stackOwner(stack)]++
  }
  const share = (n) => (samples ? n / samples : 0)
  return { samples, shares: kinds.map(share), owners: owners.map(share) }
}
