// Where users pay: the Worker CPU of a run and of each kind of request, next to `GET /healthz` in
// the same workerd process (the deployed bundle under Miniflare, test/node/worker-runtime.ts),
// then 1,000 concurrent runs against a model that takes 50 ms. The fake model is this process,
// reached over 127.0.0.1 (Miniflare's outbound service: workerd sends every outbound fetch of
// the Worker to a loopback socket of Node). CPU is the workerd process's CPU time
// (bench/workerd-cpu.mjs), less its idle rate, over batches of one kind; rounds interleave the
// kinds and each figure is the median of its batches. docs/architecture.md#performance.
import { rm } from 'node:fs/promises'
import { loadavg } from 'node:os'
import { judge, readySeconds, waitReady, within } from './verdict.mjs'
import {
  CALLBACK_HOST,
  callbackReceiver,
  cpuMs,
  cpuResolutionMs,
  idleRate,
  measure,
  median,
  MODEL_HOST,
  chatCompletion,
  sleep,
  startBenchWorker,
} from './workerd-cpu.mjs'
import { KINDS, OWNERS, perfShares, perfUsable, startPerfWorker } from './workerd-perf.mjs'

const TOKEN = 'bench-token'
const ROUNDS = 5
/** Requests (or runs) per batch: a few hundred ms of CPU (10 ms ticks where there is no schedstat). */
const BATCH = { healthz: 300, view: 200, start: 30, approval: 30, run: 15 }
const GOAL_RUN = 3
/** Unmeasured pause after a round, for the outbox work its last runs left behind. */
const SETTLE_MS = 1500
const GOAL_REQUEST = 1.5
const SCALE_RUNS = 1000
/** Rounds sampled by `perf` (a workerd of its own, after the measured rounds). */
const PERF_ROUNDS = 3
const SCALE_MODEL_MS = 50
const SCALE_TIMEOUT_MS = 300_000

/**
 * The model and the callbacks. A task names its script: `two-call …` makes a calculator call,
 * then answers; `approve …` makes an http_post (a person must approve it), then answers. While
 * `hold` is set, model replies wait for `release()`; `arrived` counts the requests received.
 */
export function network() {
  const callbacks = callbackReceiver()
  const calls = new Map()
  let gate
  const net = {
    arrived: 0,
    delayMs: 0,
    duplicates: 0,
    hold() {
      let release
      gate = new Promise((r) => (release = r))
      return () => {
        gate = undefined
        release()
      }
    },
    /** The run's callback body; a callback may come before the bench asks for it. */
    finished: callbacks.finished,
    outbound: async (request) => {
      const url = new URL(request.url)
      const body = await request.text()
      if (url.host === MODEL_HOST) {
        net.arrived++
        const reply = modelAnswer(body, calls, net)
        if (gate) await gate
        if (net.delayMs) await sleep(net.delayMs)
        return reply
      }
      if (url.host === CALLBACK_HOST && url.pathname === '/record') return Response.json({ ok: 1 })
      if (url.host === CALLBACK_HOST) return callbacks.receive(request, body)
      return new Response('unexpected host', { status: 502 })
    },
  }
  return net
}

function modelAnswer(body, calls, net) {
  const { messages } = JSON.parse(body)
  const turn = messages.filter((m) => m.role === 'assistant').length
  const task = messages.find((m) => m.role === 'user').content
  // The same run asking the same turn twice is a duplicate model call.
  const key = `${turn}:${task}`
  if (calls.has(key)) net.duplicates++
  calls.set(key, true)
  const tool = task.includes('approve')
    ? {
        name: 'http_post',
        arguments: JSON.stringify({ url: `https://${CALLBACK_HOST}/record`, body: { n: 1 } }),
      }
    : { name: 'calculator', arguments: JSON.stringify({ expression: '1 + 1' }) }
  const message =
    turn === 0
      ? {
          role: 'assistant',
          content: 'One call first.',
          tool_calls: [{ id: 'call_0', type: 'function', function: tool }],
        }
      : { role: 'assistant', content: 'Done: 2.' }
  return chatCompletion(turn, message)
}

/** Requests to workerd's own socket on 127.0.0.1 (what a deployed Worker's clients send). */
export function client(base) {
  const headers = { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' }
  let n = 0
  const call = async (path, init = {}) => {
    const res = await fetch(new URL(path, base), { headers, ...init })
    const body = await res.text()
    return { status: res.status, json: () => JSON.parse(body) }
  }
  return {
    healthz: () => call('/healthz'),
    view: (id) => call(`/v1/runs/${id}`),
    start: async (script) => {
      const res = await call('/v1/runs', {
        method: 'POST',
        body: JSON.stringify({
          task: `${script} ${n++} ${Math.random()}`,
          tools: ['calculator', 'http_post'],
          callback_url: `https://${CALLBACK_HOST}/done`,
        }),
      })
      if (res.status !== 202) throw new Error(`POST /v1/runs answered ${res.status}`)
      return res.json().id
    },
    approve: async (id, approval) => {
      const res = await call(`/v1/runs/${id}/approvals/${approval.callId}`, {
        method: 'POST',
        body: JSON.stringify({ decision: 'approve', args_hash: approval.argsHash }),
      })
      if (res.status !== 200) throw new Error(`approval answered ${res.status}`)
    },
  }
}

const until = (what, ok) => waitReady(what, ok)

/**
 * One round: a batch of every kind. `batch(work)` measures one batch and returns `{ cpu, out }`
 * (CPU in ms, what `work` returned) and whatever else it measured; the round returns, per kind,
 * that record with `n`, the requests (or runs) in the batch.
 */
async function round(net, api, batch) {
  const log = process.env.BENCH_DEBUG ? (...a) => console.error(...a) : () => {}
  const out = {}
  const kind = async (name, n, work) => {
    const m = await batch(work)
    out[name] = { ...m, n }
    log(name, m.cpu / n)
    return m.out
  }
  // A two-call run, start to callback, one after another.
  const runs = await kind('run', BATCH.run, async () => {
    const ids = []
    for (let i = 0; i < BATCH.run; i++) {
      const id = await api.start('two-call')
      const result = await within(`run ${id}'s callback`, net.finished(id))
      if (!result.ok) throw new Error(`run ${id} did not succeed: ${JSON.stringify(result)}`)
      ids.push(id)
    }
    return ids
  })
  await kind('healthz', BATCH.healthz, async () => {
    for (let i = 0; i < BATCH.healthz; i++) await api.healthz()
  })
  await kind('view', BATCH.view, async () => {
    for (let i = 0; i < BATCH.view; i++) await api.view(runs[i % runs.length])
  })
  // Starts with the model held: the request and the run's work up to its first model call.
  let release = net.hold()
  const arrived0 = net.arrived
  const starts = await kind('start', BATCH.start, async () => {
    const ids = []
    for (let i = 0; i < BATCH.start; i++) ids.push(await api.start('approve'))
    await until('the first model calls', () => net.arrived - arrived0 >= BATCH.start)
    return ids
  })
  release()
  // Those runs now wait for a person: approvals with the model held again, from the decision
  // to the run's next model call (the approved http_post made in between).
  const pending = []
  for (const id of starts) {
    let approval
    await until(`run ${id}'s approval`, async () => {
      approval = (await api.view(id)).json().pendingApprovals?.[0]
      return approval !== undefined
    })
    pending.push([id, approval, net.finished(id)])
  }
  release = net.hold()
  const arrived1 = net.arrived
  await kind('approval', BATCH.approval, async () => {
    for (const [id, approval] of pending) await api.approve(id, approval)
    await until('the next model calls', () => net.arrived - arrived1 >= BATCH.approval)
  })
  release()
  await within('the approved runs to finish', Promise.all(pending.map((p) => p[2])))
  // What those runs still do after their callback (index rows, events) must not fall into the
  // next round's first batch.
  await sleep(SETTLE_MS)
  return out
}

/** The kinds of a round as the reports name them, each goal a multiple of `/healthz`. */
const KIND_ROWS = [
  ['GET /healthz', 'healthz', 0],
  ['two-call run (start to callback)', 'run', GOAL_RUN],
  ['POST /v1/runs (to its model call)', 'start', GOAL_REQUEST],
  ['GET /v1/runs/:id', 'view', GOAL_REQUEST],
  ['POST approvals (to next model call)', 'approval', GOAL_REQUEST],
]

/**
 * The same kinds under `perf` (bench/workerd-perf.mjs), in a second workerd that writes V8's perf
 * map so that each sample can be told to be the Worker's JavaScript or not: each kind's workerd
 * CPU as the samples count it, the part in the Worker's isolate (the closest local figure to what
 * a deployment bills as the Worker's CPU), the rest, and what a two-call run's CPU is spent on.
 */
async function perfBreakdown() {
  if (!(await perfUsable())) {
    return ['  (no perf breakdown: `perf record` is not available or not permitted here)']
  }
  const net = network()
  const { rt, stop } = await startPerfWorker(net.outbound, { MODEL_STREAM: 'off' })
  try {
    const api = client(await rt.url())
    // A round unsampled first (the isolate compiles and warms up), then PERF_ROUNDS sampled.
    await round(net, api, async (work) => ({ cpu: 0, out: await work() }))
    const sampled = []
    for (let i = 0; i < PERF_ROUNDS; i++) {
      sampled.push(
        await round(net, api, async (work) => {
          let out
          const p = await perfShares(rt.pid, async () => {
            out = await work()
            await sleep(50)
          })
          return { cpu: p.cpuMs, worker: p.cpuMs * p.owners[0], p, out }
        }),
      )
    }
    const per = (k, of) => median(sampled.map((r) => r[k][of] / r[k].n))
    const health = per('healthz', 'cpu')
    // The run's kinds of work and owners over every sampled round, weighted by samples.
    const runs = sampled.map((r) => r.run.p)
    const total = runs.reduce((n, p) => n + p.samples, 0)
    const mix = (field, i) => runs.reduce((x, p) => x + p[field][i] * p.samples, 0) / total
    return [
      `  the same kinds under perf (cpu-clock samples, medians of ${PERF_ROUNDS} rounds) in a second workerd writing V8's perf map:`,
      `  ${'kind'.padEnd(36)} ${'workerd CPU'.padStart(11)}   ${"the Worker's isolate".padStart(20)}   ${'the rest'.padStart(8)}  vs all of /healthz`,
      ...KIND_ROWS.map(([label, k]) => {
        // What runs with none of the Worker's JavaScript on the stack: no change to that code
        // alone can take a request below it.
        const rest = per(k, 'cpu') - per(k, 'worker')
        return (
          `  ${label.padEnd(36)} ${per(k, 'cpu').toFixed(2).padStart(8)} ms   ${per(k, 'worker').toFixed(2).padStart(17)} ms` +
          `   ${rest.toFixed(2).padStart(5)} ms  ${(rest / health).toFixed(1).padStart(5)}x`
        )
      }),
      `  a two-call run's workerd CPU by kind of work (${total} samples):`,
      ...KINDS.map(
        (label, i) => `    ${label.padEnd(52)} ${(100 * mix('shares', i)).toFixed(1).padStart(5)}%`,
      ),
      `  and by whose code is on the stack:`,
      ...OWNERS.map(
        (label, i) => `    ${label.padEnd(52)} ${(100 * mix('owners', i)).toFixed(1).padStart(5)}%`,
      ),
    ]
  } finally {
    await stop()
    // V8 writes the map beside perf's own files; it is only for this process.
    await rm(`/tmp/perf-${rt.pid}.map`, { force: true })
  }
}

/** SCALE_RUNS runs at once against a model that takes SCALE_MODEL_MS; bounded in time. */
async function scale(rt, net, api, idle) {
  net.delayMs = SCALE_MODEL_MS
  const duplicates0 = net.duplicates
  let errors = 0
  let finished = 0
  const c0 = cpuMs(rt.pid)
  const t0 = performance.now()
  const timeout = sleep(readySeconds(SCALE_TIMEOUT_MS / 1000) * 1000).then(() => 'timeout')
  const all = Promise.all(
    Array.from({ length: SCALE_RUNS }, async () => {
      try {
        const id = await api.start('two-call')
        const result = await net.finished(id)
        if (result.ok) finished++
        else errors++
      } catch {
        errors++
      }
    }),
  )
  const timedOut = (await Promise.race([all, timeout])) === 'timeout'
  const wallMs = performance.now() - t0
  net.delayMs = 0
  return {
    wallMs,
    timedOut,
    finished,
    errors,
    duplicates: net.duplicates - duplicates0,
    cpu: cpuMs(rt.pid) - c0 - (idle * wallMs) / 1000,
  }
}

/**
 * Runs the service bench; the report's lines say PASS or FAIL per goal. `breakdown`: then the
 * perf breakdown, where perf can sample (a workerd of its own, after this one stopped).
 */
export async function benchServiceCost({ scaleRuns = true, breakdown = true } = {}) {
  const report = await measureServiceCost(scaleRuns)
  return breakdown ? `${report}\n${(await perfBreakdown()).join('\n')}` : report
}

async function measureServiceCost(scaleRuns) {
  const net = network()
  const { rt, stop } = await startBenchWorker(net.outbound, { MODEL_STREAM: 'off' })
  try {
    const api = client(await rt.url())
    // One round first, not counted: the isolate compiles and warms up.
    await round(net, api, (work) => measure(rt.pid, 0, work))
    const idle = await idleRate(rt.pid)
    const rounds = []
    for (let i = 0; i < ROUNDS; i++) {
      rounds.push(await round(net, api, (work) => measure(rt.pid, idle, work)))
    }
    const m = (k) => median(rounds.map((r) => r[k].cpu / r[k].n))
    const health = m('healthz')
    const resolution = cpuResolutionMs(rt.pid)
    const row = ([label, k, goal]) => {
      const ratio = m(k) / health
      // A batch's CPU is one reading of the counter: per request, its resolution over the batch.
      const figures = {
        [`${k} CPU ms`]: [m(k), resolution / BATCH[k]],
        'healthz CPU ms': [health, resolution / BATCH.healthz],
      }
      const judged = goal ? ` (goal ≤ ${goal}x) ${judge(figures, () => ratio <= goal)}` : ''
      return `  ${label.padEnd(36)} ${m(k).toFixed(2).padStart(7)} ms  ${ratio.toFixed(1).padStart(5)}x${judged}`
    }
    const runWallMs = median(rounds.map((r) => r.run.wallMs / r.run.n))
    const lines = [
      `service cost: Worker CPU per request kind in one workerd (Miniflare, the deployed bundle), instant fake model on 127.0.0.1`,
      `  medians of ${ROUNDS} interleaved rounds; batches of ${Object.entries(BATCH)
        .map(([k, n]) => `${n} ${k}`)
        .join(', ')}; idle ${idle.toFixed(1)} ms/s subtracted; load ${loadAverage()}`,
      `  ${'kind'.padEnd(36)} ${'CPU'.padStart(10)}  vs GET /healthz`,
      ...KIND_ROWS.map(row),
      `  a two-call run takes ${runWallMs.toFixed(1)} ms of wall time, one at a time`,
    ]
    if (scaleRuns) {
      const s = await scale(rt, net, api, idle)
      const ok = () => !s.timedOut && s.errors === 0 && s.duplicates === 0
      lines.push(
        `scale: ${SCALE_RUNS} concurrent two-call runs, a ${SCALE_MODEL_MS} ms model, one workerd`,
        `  all finished in ${(s.wallMs / 1000).toFixed(1)} s${s.timedOut ? ' (TIMED OUT)' : ''}; ` +
          `N × CPU per run = ${((SCALE_RUNS * m('run')) / 1000).toFixed(1)} s; ` +
          `workerd CPU meanwhile ${(s.cpu / 1000).toFixed(1)} s`,
        `  ${judge({ 'finished runs': s.finished }, ok)} scale: ${s.finished} of ${SCALE_RUNS} finished, ${s.errors} errors, ${s.duplicates} duplicate model calls${s.timedOut ? `, ${SCALE_RUNS - s.finished - s.errors} still running at the timeout` : ''} (goal all, 0 and 0, within ${readySeconds(SCALE_TIMEOUT_MS / 1000)} s)`,
      )
    }
    return lines.join('\n')
  } finally {
    await stop()
  }
}

/** The machine's load average over 1, 5 and 15 minutes (the bench shares its cores). */
function loadAverage() {
  return loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')
}
