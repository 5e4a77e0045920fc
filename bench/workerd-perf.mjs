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
import { sleep } from './workerd-cpu.mjs'

/** Samples per second: enough for a few thousand over a batch of runs. */
const FREQUENCY = 2000

/**
 * The kinds, in the order a sample is matched (its whole call stack): the first that matches
 * takes it. A pattern is tested against the stack's symbols, one frame per line.
 */
export const KINDS = [
  [
    'SQLite commits, files and syscalls (local disk)',
    (s) => s.includes('sqlite3') && /commit|Commit|Vfs|sqlite3_open|\[kernel/.test(s),
  ],
  ['SQLite statements', (s) => s.includes('sqlite3')],
  ['garbage collection', (s) => /v8::internal::Heap::|Scavenge|MarkCompact|cppgc::/.test(s)],
  [
    'compiling JavaScript',
    (s) => /v8::internal::(Compiler|Parser|maglev|compiler::|baseline::)/.test(s),
  ],
  ['HTTP and RPC plumbing (kj)', (s) => /kj::(Http|AsyncIoStream)|HttpService|capnp::/.test(s)],
  ['running JavaScript (every isolate)', (s) => /Builtins_|v8::|jsg::|\[unknown\]/.test(s)],
  ['kernel (sockets, scheduling)', (s) => s.includes('[kernel')],
  ['other workerd work', () => true],
]

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
 * Samples process `pid` while `work()` runs and returns each kind's share of the samples
 * (0..1, in KINDS order) and the sample count.
 */
export async function perfShares(pid, work) {
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
    // perf needs a moment to attach before the first sample.
    await sleep(300)
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
    return classify(stdout)
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

/** Counts `perf script` samples (blank-line separated stacks) by kind. */
export function classify(script) {
  const counts = KINDS.map(() => 0)
  let samples = 0
  for (const stack of script.split(/\n\s*\n/)) {
    if (!stack.trim()) continue
    samples++
    counts[KINDS.findIndex(([, match]) => match(stack))]++
  }
  return { samples, shares: counts.map((n) => (samples ? n / samples : 0)) }
}
