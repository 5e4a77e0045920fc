// A fresh process's first run against its second, as a timeline from the start request: when the
// Worker's fetch begins and ends, its call to the run's object, the alarm, each D1 round trip and
// run-list hub call (logged from inside workerd by a module put in front of the bundle, as
// bench/sql-count.mjs does; the bundle is unchanged), and each request the run sends out (the
// model, the pages, the callback: seen by the bench's fake network). Times are the machine's
// clock on both sides (workerd's Date.now() advances as it runs locally); workerd's CPU is read
// when the start request goes out, at the first model request and at the callback, so the phases
// between them say how much of the wall time was CPU and how much waiting. The same for the floor
// (bench/floor/: the least code doing the task as edgeloop does it), in fresh processes of its own
// (docs/development.md#the-first-run-after-a-fresh-start).
import { writeFileSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { bundleFloor } from './floor/build.mjs'
import { network, SYSTEMS, TASK_BINDINGS } from './peer-cost.mjs'
import { NO_MEASUREMENT } from './verdict.mjs'
import { cpuMs, median, startBenchWorker } from './workerd-cpu.mjs'

/** Fresh workerd processes: each gives one first run and its second. */
const STARTS = Number(process.env.TIMELINE_STARTS ?? 5)
const root = join(import.meta.dirname, '..')
/** What the wrapper's log lines start with. */
const MARK = 'bench-timeline'

/** The phases of a run: from the first event of one kind to the first of the next. */
const PHASES = [
  ['the start request until the Worker runs', 'request', 'fetch'],
  ["the Worker until it calls the run's object", 'fetch', 'start'],
  ["the run's object creating the run", 'start', 'start.end'],
  ['its answer until the alarm', 'start.end', 'alarm'],
  ['the alarm until the first model request', 'alarm', 'model'],
  ['the first model request until the callback', 'model', 'callback'],
]

/**
 * `build` (a WorkerBuild) with the timeline's wrapper as its entry: each line it logs is read by
 * `timelineEvent`. A D1 round trip (a batch, or one statement's `all`, `first`, `run` or `raw`)
 * is a `d1` event whose detail counts its statements.
 */
export function withTimeline(build) {
  const dir = dirname(build.scriptPath)
  const entry = join(dir, 'bench-timeline.js')
  writeFileSync(entry, wrapperSource(`./${basename(build.scriptPath)}`))
  return {
    ...build,
    scriptPath: entry,
    modules: [{ type: 'ESModule', path: entry }, ...build.modules],
  }
}

function wrapperSource(bundle) {
  return `import * as worker from ${JSON.stringify(bundle)}
export * from ${JSON.stringify(bundle)}
const mark = (event, detail = '') => console.log(${JSON.stringify(MARK)} + ' ' + Date.now() + ' ' + event + ' ' + detail)
const timed = async (event, detail, work) => {
  mark(event, detail)
  try { return await work() } finally { mark(event + '.end', detail) }
}
const ONE = ['all', 'first', 'run', 'raw']
const statements = (n) => n + (n === 1 ? ' statement' : ' statements')
function statement(prepared) {
  return new Proxy(prepared, { get(target, key) {
    const value = target[key]
    if (key === 'bind') return (...args) => statement(value.apply(target, args))
    if (ONE.includes(key)) return (...args) => timed('d1', statements(1), () => value.apply(target, args))
    return typeof value === 'function' ? value.bind(target) : value
  } })
}
function d1(db) {
  return new Proxy(db, { get(target, key) {
    const value = target[key]
    if (key === 'prepare') return (sql) => statement(value.call(target, sql))
    if (key === 'batch') return (list) => timed('d1', statements(list.length), () => value.call(target, list))
    return typeof value === 'function' ? value.bind(target) : value
  } })
}
function hub(ns) {
  return new Proxy(ns, { get(target, key) {
    const value = target[key]
    if (key !== 'get') return typeof value === 'function' ? value.bind(target) : value
    return (...args) => new Proxy(value.apply(target, args), { get(stub, method) {
      if (method !== 'changed') return stub[method]
      return (...a) => timed('hub', '', () => stub[method](...a))
    } })
  } })
}
const envs = new WeakMap()
function timedEnv(env) {
  let out = envs.get(env)
  // The floor (bench/floor/) has no run-list hub.
  if (!out) envs.set(env, (out = { ...env, RUN_INDEX: d1(env.RUN_INDEX), RUN_LIST: env.RUN_LIST && hub(env.RUN_LIST) }))
  return out
}
export class RunStore extends worker.RunStore {
  constructor(ctx, env) { super(ctx, timedEnv(env)) }
  async start(...args) { return timed('start', '', () => super.start(...args)) }
  async alarm(...args) { return timed('alarm', '', () => super.alarm(...args)) }
}
export default {
  ...worker.default,
  fetch: (request, env, ctx) => timed('fetch', new URL(request.url).pathname, () => worker.default.fetch(request, timedEnv(env), ctx)),
}
`
}

/** The event a line workerd logged holds ({ at, event, detail }), or undefined for another line. */
export function timelineEvent(line) {
  if (!line.startsWith(`${MARK} `)) return undefined
  const [, at, event, ...detail] = line.split(' ')
  return { at: Number(at), event, detail: detail.join(' ') }
}

/** One run's events ({ at, event, detail }, ms from the start request) and CPU at three points. */
async function timedRun(sys, net, log, label, name) {
  log.length = 0
  const t0 = Date.now()
  const c0 = cpuMs(sys.pid)
  const cpu = {}
  net.onOutbound = (what) => {
    log.push({ at: Date.now(), event: what, detail: '' })
    if (what === 'model' && cpu.model === undefined) cpu.model = cpuMs(sys.pid) - c0
  }
  await SYSTEMS[name].run(sys.base, net, `timeline ${label} ${Math.random()}`)
  cpu.callback = cpuMs(sys.pid) - c0
  net.onOutbound = undefined
  const events = [{ at: 0, event: 'request', detail: '' }]
  for (const e of log) events.push({ ...e, at: e.at - t0 })
  return { events: events.sort((a, b) => a.at - b.at), cpu }
}

/**
 * Runs STARTS fresh processes' first and second runs with the timeline, of edgeloop and of the
 * floor (bench/floor/: the least code doing the task as edgeloop does it) in turn; the report's text.
 */
export async function benchFirstRunTimeline() {
  const { bundleWorker } = await import('../test/node/worker-runtime.ts')
  const workers = {
    edgeloop: withTimeline({ ...(await bundleWorker()), assets: undefined }),
    floor: withTimeline(await bundleFloor(root)),
  }
  const base = network()
  const net = {
    ...base,
    outbound: (request, who) => {
      const url = new URL(request.url)
      const what = url.pathname.startsWith('/page/')
        ? 'page'
        : url.pathname === '/done'
          ? 'callback'
          : 'model'
      net.onOutbound?.(what)
      return base.outbound(request, who)
    },
  }
  const runs = { edgeloop: { first: [], second: [] }, floor: { first: [], second: [] } }
  for (let i = 0; i < STARTS; i++) {
    for (const name of i % 2 ? ['floor', 'edgeloop'] : ['edgeloop', 'floor']) {
      const log = []
      const started = await startBenchWorker((r) => net.outbound(r, name), TASK_BINDINGS, {
        worker: workers[name],
        onLog: (line) => {
          const event = timelineEvent(line)
          if (event) log.push(event)
        },
      })
      try {
        const sys = { pid: started.rt.pid, base: await started.rt.url() }
        runs[name].first.push(await timedRun(sys, net, log, 'first', name))
        runs[name].second.push(await timedRun(sys, net, log, 'second', name))
      } finally {
        await started.stop()
      }
    }
  }
  for (const [name, { first }] of Object.entries(runs)) {
    const missing = PHASES.flatMap(([, from, to]) => [from, to]).filter(
      (event) => !first[0].events.some((e) => e.event === event),
    )
    if (missing.length) {
      return `first-run timeline: ${NO_MEASUREMENT} (${name}'s first run logged no ${[...new Set(missing)].join(', ')})`
    }
  }
  return report(runs)
}

const at = (run, event) => run.events.find((e) => e.event === event)?.at ?? NaN

function report(runs) {
  const m = (name, phase, f) => median(runs[name][phase].map(f))
  const cells = (name, f) => {
    const [first, second] = [m(name, 'first', f), m(name, 'second', f)]
    return [first, second, first - second].map((x) => x.toFixed(1).padStart(7)).join(' ')
  }
  const row = (label, f) => `  ${label.padEnd(52)} ${cells('edgeloop', f)}   ${cells('floor', f)}`
  const lines = [
    `first-run timeline: the peer bench's task, ${STARTS} fresh workerd processes each of edgeloop and of the floor`,
    `  (bench/floor/: the least code doing the task as edgeloop does it), each one's first run and its second`,
    `  ms, medians (wall: the machine's clock; CPU: workerd's)    ${'edgeloop'.padEnd(23)}   floor`,
    `  ${' '.repeat(52)} ${'  first  second   extra'}   ${'  first  second   extra'}`,
    ...PHASES.map(([label, from, to]) => row(`wall: ${label}`, (r) => at(r, to) - at(r, from))),
    row('wall: the start request until the callback', (r) => at(r, 'callback')),
    row('CPU: the start request until the first model request', (r) => r.cpu.model),
    row('CPU: the first model request until the callback', (r) => r.cpu.callback - r.cpu.model),
    `  the first process's runs, each event at ms from the start request (D1: the run index; hub: the run list):`,
  ]
  for (const name of ['edgeloop', 'floor']) {
    for (const phase of ['first', 'second']) {
      const events = runs[name][phase][0].events
        .filter((e) => e.event !== 'request')
        .map((e) => `${e.at} ${e.event}${e.detail ? ` (${e.detail})` : ''}`)
      lines.push(`    ${name}, ${phase}:`)
      for (let i = 0; i < events.length; i += 6)
        lines.push(`      ${events.slice(i, i + 6).join(', ')}`)
    }
  }
  return lines.join('\n')
}
