#!/usr/bin/env node
// Two builds of edgeloop's Worker side by side, in the peer bench's harness (bench/peer-cost.mjs:
// its fake model and pages, its task, its storage counter, Worker CPU from /proc less the idle
// rate): each build in a workerd of its own, batches of runs interleaved round by round (which
// goes first alternates), at 0 and 50 ms of model latency; it prints each build's CPU per run
// (median and spread over rounds), the median of the rounds' B/A ratios, SQL statements and writes
// per run, and the load average. For a change's A/B, e.g. main against the work tree:
//
//   node bench/edgeloop-ab.mjs main            # A: main's Worker, B: the work tree's
//   node bench/edgeloop-ab.mjs main HEAD~2 10  # A: main, B: HEAD~2, 10 rounds
//
// A ref is bundled from `git archive` of it (the work tree's node_modules linked in) with
// `wrangler deploy --dry-run`, as a deploy would; `.` is the work tree as it is.
// docs/development.md#worker-cpu-per-run-beside-the-peer.
import { loadavg } from 'node:os'
import { buildOf } from './build-ref.mjs'
import { network, SYSTEMS, TASK_BINDINGS } from './peer-cost.mjs'
import { storageCounts, withStorageCounts } from './sql-count.mjs'
import { cpuMs, idleRate, median, sleep, startBenchWorker } from './workerd-cpu.mjs'

const [refA = 'main', refB = '.', rounds = '8'] = process.argv.slice(2)
const ROUNDS = Number(rounds)
const RUNS = 5
const LATENCIES_MS = [0, 50]
/** After a batch, inside its CPU window: what the runs set off after their callback. */
const SETTLE_MS = 300

async function start(name, build, net) {
  const worker = withStorageCounts(build, SYSTEMS.edgeloop.classes)
  const outbound = (request) => net.outbound(request, name)
  const started = await startBenchWorker(outbound, TASK_BINDINGS, { worker })
  return { name, ...started, base: await started.rt.url(), runs: 0 }
}

async function batch(sys, net, idle) {
  await storageCounts(sys.base)
  const c0 = cpuMs(sys.rt.pid)
  const t0 = performance.now()
  for (let i = 0; i < RUNS; i++)
    await SYSTEMS.edgeloop.run(sys.base, net, `${sys.name} ${sys.runs++}`)
  await sleep(SETTLE_MS)
  const cpu = cpuMs(sys.rt.pid) - c0 - (idle * (performance.now() - t0)) / 1000
  const counts = await storageCounts(sys.base)
  return { cpu: cpu / RUNS, statements: counts.statements / RUNS, writes: counts.writes / RUNS }
}

const load = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')
const spread = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  return `${median(s).toFixed(2)} (${s[0].toFixed(2)}–${s.at(-1).toFixed(2)})`
}

const builds = { A: await buildOf(refA), B: await buildOf(refB) }
const net = network()
const load0 = load()
const systems = { A: await start('A', builds.A, net), B: await start('B', builds.B, net) }
try {
  for (const sys of Object.values(systems)) await batch(sys, net, 0) // warm-up, not counted
  const idle = {}
  for (const [name, sys] of Object.entries(systems)) idle[name] = await idleRate(sys.rt.pid)
  console.log(`A = ${refA}, B = ${refB}: ${ROUNDS} interleaved rounds of ${RUNS} runs each`)
  for (const latency of LATENCIES_MS) {
    net.delayMs = latency
    const got = { A: [], B: [] }
    for (let r = 0; r < ROUNDS; r++) {
      for (const name of r % 2 ? ['B', 'A'] : ['A', 'B']) {
        got[name].push(await batch(systems[name], net, idle[name]))
      }
    }
    const cpu = (name) => got[name].map((b) => b.cpu)
    const ratios = got.B.map((b, i) => b.cpu / got.A[i].cpu)
    const per = (name, key) => median(got[name].map((b) => b[key])).toFixed(1)
    console.log(
      `  ${latency} ms: CPU per run A ${spread(cpu('A'))} ms, B ${spread(cpu('B'))} ms; ` +
        `B/A by round ${spread(ratios)}; B/A of medians ${(median(cpu('B')) / median(cpu('A'))).toFixed(3)}; ` +
        `SQL statements A ${per('A', 'statements')} B ${per('B', 'statements')}, writes A ${per('A', 'writes')} B ${per('B', 'writes')}`,
    )
  }
  console.log(`  load average before ${load0}, after ${load()}`)
} finally {
  for (const sys of Object.values(systems)) await sys.stop()
  for (const b of Object.values(builds)) b.cleanup?.()
}
