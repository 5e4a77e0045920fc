// edgeloop beside Cloudflare's Agents SDK (the peer, bench/peer/: an `Agent` per run running the
// AI SDK's `generateText`, its messages kept with `this.sql`), in the same harness: each Worker
// in a workerd of its own under Miniflare (test/node/worker-runtime.ts), both reaching the same
// fake OpenAI-compatible model and the same page server in this process over 127.0.0.1, both
// given the same two-call task (model → http_get → model → http_get → answer, 1 KiB pages).
// Rounds interleave the two (which goes first alternates), at each model latency. Worker CPU is
// each workerd process's CPU (bench/workerd-cpu.mjs) less its idle rate; SQL is counted inside
// each workerd by wrapping `ctx.storage.sql` (bench/sql-count.mjs); bytes at rest are the
// Durable Objects' database files. Beside them the floor (bench/floor/: the least code doing the
// task as edgeloop does it, with its bindings and clients) and two variants of it, figures only:
// what a first run after a fresh start costs any Worker doing this task, against edgeloop's own
// code. docs/development.md#the-peer-bench.
import { readdirSync, readFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { gzipSync } from 'node:zlib'
import { bundleFloor, FLOOR_VARIANTS } from './floor/build.mjs'
import { bundlePeer, installPeer } from './peer-build.mjs'
import { storageCounts, withStorageCounts } from './sql-count.mjs'
import { judge, unmeasured, within } from './verdict.mjs'
import {
  CALLBACK_HOST,
  callbackReceiver,
  chatCompletion,
  cpuMs,
  cpuResolutionMs,
  idleRate,
  median,
  MODEL_HOST,
  sleep,
  startBenchWorker,
} from './workerd-cpu.mjs'

const ROUNDS = Number(process.env.PEER_ROUNDS ?? 5)
/** Runs per batch, one after another: CPU is read once per batch. */
const RUNS = 5
const LATENCIES_MS = [0, 50]
/** Fresh workerd processes per system and floor build for the first run after a start. */
const FRESH_STARTS = Number(process.env.PEER_FRESH_STARTS ?? 3)
/** In each fresh process after its first and second run: warm runs, timed one by one. */
const FRESH_WARM_RUNS = 3
/** Before each of those: the previous run's deliveries after its end settle, outside the timing. */
const FRESH_GAP_MS = 50
/** After a batch, inside its CPU window: work the runs set off after answering (index, events). */
const SETTLE_MS = 300
const PAGE_BYTES = 1024
const GOAL_CPU_RATIO = 1.0
const GOAL_SQL_WRITES = 30
const GOAL_FIRST_RUN = 1.5
const TOKEN = 'bench-token'
/** Per run: three model calls and two page reads, in both systems. */
const EXPECTED = { model: 3, pages: 2 }

/** A page of about PAGE_BYTES of text, the same for every read. */
const PAGE = Array.from({ length: 64 }, (_, i) => `line ${String(i).padStart(2, '0')}: ok`)
  .join('\n')
  .padEnd(PAGE_BYTES, '.')

/**
 * The outside world of both Workers (also the first-run profile's, bench/first-run-profile.mjs). The model counts assistant turns: a call to http_get of
 * page 1, then page 2, then the answer. `outbound(request, name)` counts model calls and page
 * reads per system (each workerd's outbound service names its system).
 */
export function network() {
  const callbacks = callbackReceiver()
  // Per system by name (bench/edgeloop-ab.mjs names two builds of edgeloop A and B).
  const seen = { edgeloop: { model: 0, pages: 0 }, peer: { model: 0, pages: 0 } }
  const net = {
    delayMs: 0,
    seen,
    /** The run's callback body; a callback may come before the bench asks for it. */
    finished: callbacks.finished,
    outbound: async (request, who) => {
      const url = new URL(request.url)
      if (url.host === MODEL_HOST) {
        const { messages } = JSON.parse(await request.text())
        const turn = messages.filter((m) => m.role === 'assistant').length
        seen[who] ??= { model: 0, pages: 0 }
        seen[who].model++
        if (net.delayMs) await sleep(net.delayMs)
        const call = (n) => ({
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: `call_${n}`,
              type: 'function',
              function: {
                name: 'http_get',
                arguments: JSON.stringify({ url: `https://${CALLBACK_HOST}/page/${n}` }),
              },
            },
          ],
        })
        const answer = { role: 'assistant', content: 'Both pages say ok.' }
        return chatCompletion(turn, turn < 2 ? call(turn + 1) : answer)
      }
      if (url.host === CALLBACK_HOST && url.pathname.startsWith('/page/')) {
        seen[who] ??= { model: 0, pages: 0 }
        seen[who].pages++
        return new Response(PAGE, { headers: { 'content-type': 'text/plain' } })
      }
      if (url.host === CALLBACK_HOST) return callbacks.receive(request, await request.text())
      return new Response('unexpected host', { status: 502 })
    },
  }
  return net
}

/**
 * A run started by `POST /v1/runs` and done at its callback: edgeloop's API, which the floor
 * answers the same way. `label` names the system in errors.
 */
const apiRun = (label) =>
  async function run(base, net, n) {
    const res = await fetch(new URL('/v1/runs', base), {
      method: 'POST',
      headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({
        task: `Read pages 1 and 2, then say what they say (${n}).`,
        tools: ['http_get'],
        callback_url: `https://${CALLBACK_HOST}/done`,
      }),
    })
    const body = await res.json()
    if (res.status !== 202) throw new Error(`${label}: POST /v1/runs answered ${res.status}`)
    const result = await within(`${label} run ${body.id}'s callback`, net.finished(body.id))
    if (!result.ok) throw new Error(`${label} run ${body.id} failed: ${JSON.stringify(result)}`)
  }

/**
 * The two systems and the floor's builds (FLOOR_VARIANTS, not systems: figures only): how each
 * starts a run and knows it is done.
 */
export const SYSTEMS = {
  edgeloop: { classes: ['RunStore'], runClass: 'RunStore', run: apiRun('edgeloop') },
  peer: {
    classes: ['RunAgent'],
    runClass: 'RunAgent',
    async run(base, _net, n) {
      const res = await within(
        'the peer run to answer',
        fetch(new URL('/runs', base), {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ task: `Read pages 1 and 2, then say what they say (${n}).` }),
        }),
      )
      const body = await res.json()
      if (res.status !== 200 || !body.ok || body.steps !== 3) {
        throw new Error(`peer: POST /runs answered ${res.status}: ${JSON.stringify(body)}`)
      }
    },
  },
  ...Object.fromEntries(
    Object.keys(FLOOR_VARIANTS).map((name) => [
      name,
      { classes: ['RunStore'], runClass: 'RunStore', run: apiRun(name) },
    ]),
  ),
}

/** The settings both systems run the task with (the tool and its allowlist; no streaming). */
export const TASK_BINDINGS = {
  ENABLED_TOOLS: 'http_get',
  HTTP_ALLOWLIST: CALLBACK_HOST,
  MODEL_STREAM: 'off',
}

/** One workerd running `build` (with its storage counted), its base URL, idle rate and runs. */
async function start(name, build, net) {
  const worker = withStorageCounts(build, SYSTEMS[name].classes)
  const bindings = TASK_BINDINGS
  const outbound = (request) => net.outbound(request, name)
  const started = await startBenchWorker(outbound, bindings, { worker })
  const base = await started.rt.url()
  return { name, ...started, base, runs: 0 }
}

/**
 * A batch of RUNS runs of one system at the current latency: CPU per run (less idle), each
 * run's wall time, and what its Durable Objects wrote per run.
 */
async function batch(sys, net, idle) {
  await storageCounts(sys.base)
  const seen0 = { ...net.seen[sys.name] }
  const walls = []
  const c0 = cpuMs(sys.rt.pid)
  const t0 = performance.now()
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now()
    await SYSTEMS[sys.name].run(sys.base, net, sys.runs++)
    walls.push(performance.now() - t)
  }
  await sleep(SETTLE_MS)
  const wallMs = performance.now() - t0
  const cpu = cpuMs(sys.rt.pid) - c0 - (idle * wallMs) / 1000
  const counts = await storageCounts(sys.base)
  const seen = net.seen[sys.name]
  return {
    cpu: cpu / RUNS,
    wall: median(walls),
    statements: counts.statements / RUNS,
    writes: counts.writes / RUNS,
    rows: counts.rowsWritten / RUNS,
    kvWrites: counts.kvWrites / RUNS,
    alarms: counts.alarms / RUNS,
    model: (seen.model - seen0.model) / RUNS,
    pages: (seen.pages - seen0.pages) / RUNS,
  }
}

/**
 * Bytes at rest of the databases under `dir`/`folder` (Miniflare's layout: a SQLite file per
 * object): each database's size as SQLite counts it (pages × page size, the WAL's pages
 * included, read through node:sqlite while workerd holds them), which is what a deployment
 * stores, not the files' sizes (their WAL grows with every commit until a checkpoint).
 */
function bytesAtRest(dir, folder) {
  const at = join(dir, folder)
  let total = 0
  for (const file of readdirSync(at)) {
    if (!file.endsWith('.sqlite') || file === 'metadata.sqlite') continue
    // workerd may be committing (an alarm, a delivery): wait for its lock rather than fail.
    const db = new DatabaseSync(join(at, file), { readOnly: true, timeout: 10_000 })
    try {
      const pages = db.prepare('PRAGMA page_count').get().page_count
      total += pages * db.prepare('PRAGMA page_size').get().page_size
    } finally {
      db.close()
    }
  }
  return total
}

/**
 * The first run of a fresh workerd, a second, then FRESH_WARM_RUNS warm ones of the same process:
 * each run's wall time and workerd CPU from its start request to its end (the callback; the peer:
 * its answer), the warm runs' medians, and whether every run did the task (its model calls and
 * page reads, seen by the fake network).
 */
async function freshStart(name, build, net) {
  const sys = await start(name, build, net)
  try {
    const seen0 = { ...(net.seen[name] ?? { model: 0, pages: 0 }) }
    const timed = async (label) => {
      const c0 = cpuMs(sys.rt.pid)
      const t0 = performance.now()
      await SYSTEMS[name].run(sys.base, net, `${label} ${Math.random()}`)
      return { wall: performance.now() - t0, cpu: cpuMs(sys.rt.pid) - c0 }
    }
    const first = await timed('fresh')
    const second = await timed('second')
    const warm = []
    for (let i = 0; i < FRESH_WARM_RUNS; i++) {
      await sleep(FRESH_GAP_MS)
      warm.push(await timed('warm'))
    }
    const runs = 2 + FRESH_WARM_RUNS
    const seen = net.seen[name]
    const task =
      seen.model - seen0.model === EXPECTED.model * runs &&
      seen.pages - seen0.pages === EXPECTED.pages * runs
    return {
      first: first.wall,
      cpu: first.cpu,
      second: second.wall,
      warm: median(warm.map((w) => w.wall)),
      warmCpu: median(warm.map((w) => w.cpu)),
      task,
      resolution: cpuResolutionMs(sys.rt.pid),
    }
  } finally {
    await sys.stop()
  }
}

/** `names` starting at its `r`-th (round `r`'s order: each goes first in turn). */
const rotated = (names, r) => names.map((_, i) => names[(i + r) % names.length])

const spread = (xs, digits = 1) => {
  const s = [...xs].sort((a, b) => a - b)
  return `${median(s).toFixed(digits)} (${s[0].toFixed(digits)}–${s.at(-1).toFixed(digits)})`
}
const gzipKiB = (path) => (gzipSync(readFileSync(path), { level: 9 }).length / 1024).toFixed(1)
const load = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')

/** Runs the side-by-side bench; the report's lines say PASS, FAIL or no measurement per goal. */
export async function benchPeer(root) {
  const versions = await installPeer(root)
  const { bundleWorker } = await import('../test/node/worker-runtime.ts')
  const builds = {
    edgeloop: { ...(await bundleWorker()), assets: undefined },
    peer: await bundlePeer(root),
  }
  for (const variant of Object.keys(FLOOR_VARIANTS)) {
    builds[variant] = await bundleFloor(root, variant)
  }
  const net = network()
  const load0 = load()
  // The floor runs in the batches too, for its warm figures (it is no system: no goal is its).
  const systems = {
    edgeloop: await start('edgeloop', builds.edgeloop, net),
    peer: await start('peer', builds.peer, net),
    floor: await start('floor', builds.floor, net),
  }
  const results = { edgeloop: {}, peer: {}, floor: {} }
  try {
    // One batch of each first, not counted: the isolates compile and warm up.
    for (const sys of Object.values(systems)) await batch(sys, net, 0)
    const idle = {}
    for (const [name, sys] of Object.entries(systems)) idle[name] = await idleRate(sys.rt.pid)
    for (const latency of LATENCIES_MS) {
      net.delayMs = latency
      // The floor at 0 ms only: its warm run is what its first run is set beside.
      const names = Object.keys(systems).filter((name) => name !== 'floor' || latency === 0)
      for (const name of names) results[name][latency] = []
      for (let r = 0; r < ROUNDS; r++) {
        for (const name of rotated(names, r)) {
          results[name][latency].push(await batch(systems[name], net, idle[name]))
        }
      }
    }
    net.delayMs = 0
    const rest = {}
    for (const [name, sys] of Object.entries(systems)) {
      rest[name] = bytesAtRest(sys.storage, `do/-${SYSTEMS[name].runClass}`) / sys.runs
    }
    const resolution = {}
    for (const [name, sys] of Object.entries(systems)) {
      resolution[name] = cpuResolutionMs(sys.rt.pid) / RUNS
    }
    const index =
      bytesAtRest(systems.edgeloop.storage, 'd1/miniflare-D1DatabaseObject') / systems.edgeloop.runs
    for (const sys of Object.values(systems)) await sys.stop()
    // The first run after a fresh start: the systems and the floor's builds in turn.
    const fresh = Object.fromEntries(Object.keys(builds).map((name) => [name, []]))
    for (let i = 0; i < FRESH_STARTS; i++) {
      for (const name of rotated(Object.keys(builds), i)) {
        fresh[name].push(await freshStart(name, builds[name], net))
      }
    }
    return report({ results, rest, index, fresh, resolution, versions, builds, load0, idle })
  } finally {
    for (const sys of Object.values(systems)) await sys.stop()
  }
}

function report({ results, rest, index, fresh, resolution, versions, builds, load0, idle }) {
  const med = (name, latency, key) => median(results[name][latency].map((b) => b[key]))
  const all = (name, latency, key) => results[name][latency].map((b) => b[key])
  const lines = [
    `peer: edgeloop beside Cloudflare's Agents SDK (agents ${versions.agents}, ai ${versions.ai}, ` +
      `@ai-sdk/openai-compatible ${versions['@ai-sdk/openai-compatible']}; an Agent per run running generateText)`,
    `  the same two-call task on both (model → http_get → model → http_get → answer, ${PAGE_BYTES} B pages),`,
    `  one workerd each under Miniflare, ${ROUNDS} interleaved rounds of ${RUNS} runs per system and latency (the floor: 0 ms);`,
    `  figures per run: median (min–max) over rounds; idle subtracted (edgeloop ${idle.edgeloop.toFixed(1)}, peer ${idle.peer.toFixed(1)}, floor ${idle.floor.toFixed(1)} ms/s)`,
    `  the floor: the least code doing the task as edgeloop does it (bench/floor/), figures only, no goal`,
    `  load average before ${load0}, after ${load()} (1, 5, 15 min; the machine is shared)`,
  ]
  const cell = (name, latency, key, digits, unit) => {
    const text = results[name][latency] ? `${spread(all(name, latency, key), digits)}${unit}` : '–'
    return text.padStart(24)
  }
  const row =
    (label, key, digits = 1, unit = '') =>
    (latency) => {
      const e = med('edgeloop', latency, key)
      const p = med('peer', latency, key)
      return `  ${label.padEnd(28)} ${cell('edgeloop', latency, key, digits, unit)} ${cell('peer', latency, key, digits, unit)} ${(p ? `${(e / p).toFixed(2)}x` : '–').padStart(7)} ${cell('floor', latency, key, digits, unit)}`
    }
  // Whether a system's (or the floor's) batches did the task: three model calls and two page reads
  // a run; a figure of a run that skipped part of it is no measurement.
  const task = (name, latency) => {
    const m = med(name, latency, 'model')
    const g = med(name, latency, 'pages')
    return m === EXPECTED.model && g === EXPECTED.pages ? m : 0
  }
  const verdicts = []
  for (const latency of LATENCIES_MS) {
    lines.push(
      '',
      `  model latency ${latency} ms             ${'edgeloop'.padStart(24)} ${'Agents SDK peer'.padStart(24)}  ratio ${(latency ? 'floor: at 0 ms only' : 'floor (not a system)').padStart(24)}`,
      row('Worker CPU, ms', 'cpu', 2)(latency),
      row('wall, ms', 'wall', 1)(latency),
      row('SQL statements', 'statements', 1)(latency),
      row('SQL writes', 'writes', 1)(latency),
      row('rows written', 'rows', 1)(latency),
      row('key-value writes', 'kvWrites', 1)(latency),
      row('alarms set', 'alarms', 1)(latency),
      row('model calls', 'model', 1)(latency),
      row('page reads', 'pages', 1)(latency),
    )
    const floorWhy =
      results.floor[latency] &&
      unmeasured({
        'floor CPU ms': [med('floor', latency, 'cpu'), resolution.floor],
        'floor runs doing the task': task('floor', latency),
      })
    if (floorWhy) lines.push(`  floor at ${latency} ms: no measurement (${floorWhy})`)
    const e = med('edgeloop', latency, 'cpu')
    const p = med('peer', latency, 'cpu')
    verdicts.push(
      `${judge(
        {
          'edgeloop CPU ms': [e, resolution.edgeloop],
          'peer CPU ms': [p, resolution.peer],
          'edgeloop runs doing the task': task('edgeloop', latency),
          'peer runs doing the task': task('peer', latency),
        },
        () => e <= GOAL_CPU_RATIO * p,
      )} peer: Worker CPU per run at ${latency} ms model latency, edgeloop ${e.toFixed(2)} ms vs peer ${p.toFixed(2)} ms = ${(e / p).toFixed(2)}x (goal ≤ ${GOAL_CPU_RATIO}x)`,
    )
  }
  const writes = median(LATENCIES_MS.flatMap((l) => all('edgeloop', l, 'writes')))
  const worstWrites = Math.max(...LATENCIES_MS.flatMap((l) => all('edgeloop', l, 'writes')))
  verdicts.push(
    `${judge({ 'edgeloop SQL writes per run': writes }, () => worstWrites <= GOAL_SQL_WRITES)} peer: edgeloop SQL write statements per run ${writes.toFixed(1)} (most in a batch ${worstWrites.toFixed(1)}; peer ${median(LATENCIES_MS.flatMap((l) => all('peer', l, 'writes'))).toFixed(1)}) (goal ≤ ${GOAL_SQL_WRITES})`,
  )
  lines.push(
    '',
    `  bytes at rest per run (the run's Durable Object database): edgeloop ${rest.edgeloop.toFixed(0)} B, peer ${rest.peer.toFixed(0)} B (${(rest.edgeloop / rest.peer).toFixed(2)}x), floor ${rest.floor.toFixed(0)} B; edgeloop's run index (D1) ${index.toFixed(0)} B more`,
    `  bundle as deployed, gzip: edgeloop ${gzipKiB(builds.edgeloop.scriptPath)} KiB, peer ${gzipKiB(builds.peer.scriptPath)} KiB, floor ${gzipKiB(builds.floor.scriptPath)} KiB (reported, not a goal)`,
    '',
    ...freshLines(fresh, med('edgeloop', 0, 'wall')),
  )
  const first = median(fresh.edgeloop.map((x) => x.first))
  const warm = med('edgeloop', 0, 'wall')
  verdicts.push(
    `${judge({ 'first run wall ms': first, 'warm run wall ms': warm }, () => first <= GOAL_FIRST_RUN * warm)} peer: edgeloop's first run after a fresh start ${first.toFixed(0)} ms = ${(first / warm).toFixed(2)}x a warm run's ${warm.toFixed(0)} ms (goal ≤ ${GOAL_FIRST_RUN}x)`,
  )
  return [...lines, '', ...verdicts].join('\n')
}

/**
 * The first run after a fresh start, per system and floor build: first, second and warm (the
 * same process's), first/warm and the extra (first − warm, per process) in wall and CPU; then
 * the floor's extra beside the goal's allowance, `batchWarm` (edgeloop's warm batches at 0 ms)
 * × (GOAL_FIRST_RUN − 1). A build whose runs did not all do the task is no measurement.
 */
export function freshLines(fresh, batchWarm) {
  const lines = [
    `  first run after a fresh start (${FRESH_STARTS} fresh workerd processes each, interleaved, model latency 0): in each process the first run,`,
    `  a second, then ${FRESH_WARM_RUNS} warm runs; wall and workerd CPU from the start request to the run's end; median (min–max) over processes`,
  ]
  const figures = {}
  for (const [name, runs] of Object.entries(fresh)) {
    const why = unmeasured({
      [`${name} first run wall ms`]: median(runs.map((x) => x.first)),
      [`${name} first run CPU ms`]: [median(runs.map((x) => x.cpu)), runs[0]?.resolution],
      [`${name} warm run CPU ms`]: [median(runs.map((x) => x.warmCpu)), runs[0]?.resolution],
      [`${name} processes whose runs did the task`]: runs.filter((x) => x.task).length,
    })
    const missed = runs.length - runs.filter((x) => x.task).length
    if (why || missed) {
      lines.push(
        `  ${name.padEnd(19)} no measurement (${why ?? `in ${missed} of ${runs.length} processes the runs skipped part of the task`})`,
      )
      continue
    }
    const extra = runs.map((x) => x.first - x.warm)
    const extraCpu = runs.map((x) => x.cpu - x.warmCpu)
    figures[name] = { extra: median(extra), extraCpu: median(extraCpu) }
    lines.push(
      `  ${name.padEnd(19)} first ${spread(runs.map((x) => x.first))} (CPU ${spread(runs.map((x) => x.cpu))}), second ${spread(runs.map((x) => x.second))}, warm ${median(runs.map((x) => x.warm)).toFixed(1)} (CPU ${median(runs.map((x) => x.warmCpu)).toFixed(1)}): first/warm ${median(runs.map((x) => x.first / x.warm)).toFixed(2)}x; extra ${spread(extra)} ms wall, ${spread(extraCpu)} ms CPU`,
    )
  }
  const allowance = (GOAL_FIRST_RUN - 1) * batchWarm
  const floor = figures.floor
  const why = unmeasured({ "the floor's extra": floor?.extra, 'the warm batches': batchWarm })
  lines.push(
    why
      ? `  the floor beside the goal: no measurement (${why})`
      : `  the floor's extra ${floor.extra.toFixed(1)} ms wall (${floor.extraCpu.toFixed(1)} ms CPU) beside the goal's allowance, ${(GOAL_FIRST_RUN - 1).toFixed(1)} × edgeloop's warm run (${batchWarm.toFixed(1)} ms, its batches at 0 ms) = ${allowance.toFixed(1)} ms; edgeloop's extra ${figures.edgeloop ? `${figures.edgeloop.extra.toFixed(1)} ms` : 'no measurement'}`,
  )
  // What each part the variants leave out adds to the floor's extra (differences of medians).
  for (const [variant, part] of [
    ['floor, no D1', "D1's writes (the binding's client and Miniflare's simulator)"],
    ['floor, plain fetch', "the openai client's first use"],
  ]) {
    if (floor && figures[variant]) {
      lines.push(
        `    ${part}: ${(floor.extra - figures[variant].extra).toFixed(1)} ms wall, ${(floor.extraCpu - figures[variant].extraCpu).toFixed(1)} ms CPU of the floor's extra (floor − ${variant})`,
      )
    }
  }
  return lines
}
