#!/usr/bin/env node
// Worker CPU per phase of a run, two systems side by side: the peer bench's task (bench/peer-cost.mjs)
// with its fake model and pages, each system in a workerd of its own, runs interleaved one by one
// (which goes first alternates). At each request a run sends (a model call, a page, the callback)
// the fake waits PAUSE_MS, so that what the run set off before it (a D1 write, a hub call, a
// commit) is done, reads the workerd process's CPU (schedstat, in ns) and only then answers: the
// CPU between two requests is what the run did between them. Medians over runs, per phase and
// for the whole run (to SETTLE_MS after the run's end: its last deliveries and commits).
//
//   node bench/run-phases.mjs main .          # A: main's Worker, B: the work tree's
//   node bench/run-phases.mjs . peer 40 50    # edgeloop beside the Agents SDK peer, 40 runs, 50 ms
//
// A system is a git ref of edgeloop (bundled by bench/build-ref.mjs; `.` the work tree) or `peer`.
// A run's phases read to a tenth of a millisecond over 30 runs at a load of 2–3, where batches of
// runs (bench/edgeloop-ab.mjs) spread by ±10–15%: docs/development.md#worker-cpu-per-run-beside-the-peer.
import { loadavg } from 'node:os'
import { buildOf } from './build-ref.mjs'
import { bundlePeer, installPeer } from './peer-build.mjs'
import { network, SYSTEMS, TASK_BINDINGS } from './peer-cost.mjs'
import { NO_MEASUREMENT, unmeasured } from './verdict.mjs'
import { cpuMs, median, sleep, startBenchWorker } from './workerd-cpu.mjs'

const [refA = 'main', refB = '.', runs = '30', latency = '0'] = process.argv.slice(2)
const RUNS = Number(runs)
const LATENCY_MS = Number(latency)
const WARMUP_RUNS = 8
/** How long each request waits before the CPU is read: what the run set off before it ends. */
const PAUSE_MS = 40
/** After a run's end, inside its last phase. */
const SETTLE_MS = 150

const root = new URL('..', import.meta.url).pathname
const load = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')

async function start(label, ref, net) {
  const kind = ref === 'peer' ? 'peer' : 'edgeloop'
  if (kind === 'peer') await installPeer(root)
  const build = kind === 'peer' ? await bundlePeer(root) : await buildOf(ref)
  const sys = { label, ref, kind, marks: null, phases: new Map(), totals: [], build }
  const outbound = async (request) => {
    if (sys.marks) {
      await sleep(PAUSE_MS)
      sys.marks.push([new URL(request.url).pathname, cpuMs(sys.pid)])
    }
    return net.outbound(request, label)
  }
  const started = await startBenchWorker(outbound, TASK_BINDINGS, { worker: build })
  return Object.assign(sys, started, { pid: started.rt.pid, base: await started.rt.url() })
}

/** One run of `sys` with its phases' CPU recorded. */
async function run(sys, net, n) {
  sys.marks = [['start', cpuMs(sys.pid)]]
  await SYSTEMS[sys.kind].run(sys.base, net, `${sys.label} ${n}`)
  await sleep(SETTLE_MS)
  sys.marks.push(['end', cpuMs(sys.pid)])
  const marks = sys.marks
  sys.marks = null
  for (let k = 1; k < marks.length; k++) {
    const phase = `${marks[k - 1][0]} → ${marks[k][0]}`
    if (!sys.phases.has(phase)) sys.phases.set(phase, [])
    sys.phases.get(phase).push(marks[k][1] - marks[k - 1][1])
  }
  sys.totals.push(marks.at(-1)[1] - marks[0][1])
}

const net = network()
net.delayMs = LATENCY_MS
const load0 = load()
const systems = [await start('A', refA, net), await start('B', refB, net)]
try {
  let n = 0
  for (const sys of systems) for (let i = 0; i < WARMUP_RUNS; i++) await run(sys, net, n++)
  for (const sys of systems) {
    sys.phases.clear()
    sys.totals = []
  }
  for (let i = 0; i < RUNS; i++) {
    for (const sys of i % 2 ? [...systems].reverse() : systems) await run(sys, net, n++)
  }
} finally {
  for (const sys of systems) {
    await sys.stop()
    sys.build.cleanup?.()
  }
}

const [a, b] = systems
// Figures of nothing are not printed as figures: a CPU of 0, or a system that skipped part of
// the task (3 model calls and 2 page reads a run, warm-up runs included).
const why = unmeasured({
  [`${refA} CPU`]: median(a.totals),
  [`${refB} CPU`]: median(b.totals),
  ...Object.fromEntries(
    systems.flatMap((sys) => {
      const seen = net.seen[sys.label] ?? { model: 0, pages: 0 }
      const all = RUNS + WARMUP_RUNS
      return seen.model === 3 * all && seen.pages === 2 * all
        ? []
        : [[`${sys.ref}'s model calls and page reads`, undefined]]
    }),
  ),
})
if (why) {
  console.log(`run phases: ${NO_MEASUREMENT} (${why})`)
  process.exit(1)
}
const ms = (x) => (x === undefined ? '     –' : x.toFixed(2).padStart(6))
console.log(
  `Worker CPU per phase of a run, ms: median over ${RUNS} interleaved runs each, model latency ${LATENCY_MS} ms`,
)
console.log(`  A = ${refA}, B = ${refB}; load average before ${load0}, after ${load()}`)
console.log(`       A      B    B−A  phase (from a request the run sends to the next)`)
const phases = [...new Set([...a.phases.keys(), ...b.phases.keys()])]
for (const phase of phases) {
  const x = a.phases.has(phase) ? median(a.phases.get(phase)) : undefined
  const y = b.phases.has(phase) ? median(b.phases.get(phase)) : undefined
  const diff = x !== undefined && y !== undefined ? ms(y - x) : '     –'
  console.log(`  ${ms(x)} ${ms(y)} ${diff}  ${phase}`)
}
const ratios = b.totals.map((t, i) => t / a.totals[i])
console.log(
  `  ${ms(median(a.totals))} ${ms(median(b.totals))} ${ms(median(b.totals) - median(a.totals))}  the whole run; B/A of medians ${(median(b.totals) / median(a.totals)).toFixed(3)}, by pair of runs ${median(ratios).toFixed(3)}`,
)
