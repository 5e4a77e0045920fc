// Where users pay: the Worker CPU of a run and of each kind of request, next to `GET /healthz` in
// the same workerd process (the deployed bundle under Miniflare, test/node/worker-runtime.ts),
// then 1,000 concurrent runs against a model that takes 50 ms. The fake model is this process,
// reached over 127.0.0.1 (Miniflare's outbound service: workerd sends every outbound fetch of
// the Worker to a loopback socket of Node). CPU is the workerd process's user + system time
// (bench/workerd-cpu.mjs), less its idle rate, over batches of one kind; rounds interleave the
// kinds and each figure is the median of its batches. docs/architecture.md#performance.
import { rm } from 'node:fs/promises'
import { loadavg } from 'node:os'
import {
  CALLBACK_HOST,
  cpuMs,
  idleRate,
  measure,
  median,
  MODEL_HOST,
  chatCompletion,
  sleep,
  startBenchWorker,
} from './workerd-cpu.mjs'
import { KINDS, OWNERS, perfShares, perfUsable, V8_PERF_FLAGS } from './workerd-perf.mjs'

const TOKEN = 'bench-token'
const ROUNDS = 5
/** Requests (or runs) per batch: each batch costs a few hundred ms of CPU, 10 ms ticks apart. */
const BATCH = { healthz: 300, view: 200, start: 30, approval: 30, run: 15 }
const GOAL_RUN = 3
/** Unmeasured pause after a round, for the outbox work its last runs left behind. */
const SETTLE_MS = 1500
const GOAL_REQUEST = 1.5
const SCALE_RUNS = 1000
/** Runs and requests a kind sampled by `perf` (a workerd of its own, after the rounds). */
const PERF_RUNS = 30
const PERF_REQUESTS = 1000
const SCALE_MODEL_MS = 50
const SCALE_TIMEOUT_MS = 300_000

/**
 * The model and the callbacks. A task names its script: `two-call …` makes a calculator call,
 * then answers; `approve …` makes an http_post (a person must approve it), then answers. While
 * `hold` is set, model replies wait for `release()`; `arrived` counts the requests received.
 */
export function network() {
  const waiting = new Map()
  const results = new Map()
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
    finished: (id) => {
      const done = results.get(id)
      if (done) return done
      const next = new Promise((resolve) => waiting.set(id, resolve))
      results.set(id, next)
      return next
    },
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
      if (url.host === CALLBACK_HOST) {
        const id = request.headers.get('x-edgeloop-run-id')
        const result = JSON.parse(body)
        if (waiting.has(id)) waiting.get(id)(result)
        else results.set(id, Promise.resolve(result))
        waiting.delete(id)
        return new Response(null, { status: 204 })
      }
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

async function until(what, ok, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(5)
  }
}

/** One round: a batch of every kind, CPU per request (or per run) of each. */
async function round(rt, net, api, idle) {
  const pid = rt.pid
  const log = process.env.BENCH_DEBUG ? (...a) => console.error(...a) : () => {}
  const out = {}
  // A two-call run, start to callback, one after another.
  const runs = await measure(pid, idle, async () => {
    const ids = []
    for (let i = 0; i < BATCH.run; i++) {
      const id = await api.start('two-call')
      const result = await net.finished(id)
      if (!result.ok) throw new Error(`run ${id} did not succeed: ${JSON.stringify(result)}`)
      ids.push(id)
    }
    return ids
  })
  out.run = runs.cpu / BATCH.run
  log('runs', out.run)
  out.runWallMs = runs.wallMs / BATCH.run
  out.healthz =
    (
      await measure(pid, idle, async () => {
        for (let i = 0; i < BATCH.healthz; i++) await api.healthz()
      })
    ).cpu / BATCH.healthz
  out.view =
    (
      await measure(pid, idle, async () => {
        for (let i = 0; i < BATCH.view; i++) await api.view(runs.out[i % runs.out.length])
      })
    ).cpu / BATCH.view
  // Starts with the model held: the request and the run's work up to its first model call.
  let release = net.hold()
  const arrived0 = net.arrived
  const starts = await measure(pid, idle, async () => {
    const ids = []
    for (let i = 0; i < BATCH.start; i++) ids.push(await api.start('approve'))
    await until('the first model calls', () => net.arrived - arrived0 >= BATCH.start)
    return ids
  })
  out.start = starts.cpu / BATCH.start
  log('starts', out.start)
  release()
  // Those runs now wait for a person: approvals with the model held again, from the decision
  // to the run's next model call (the approved http_post made in between).
  const pending = []
  for (const id of starts.out) {
    let approval
    await until(`run ${id}'s approval`, async () => {
      approval = (await api.view(id)).json().pendingApprovals?.[0]
      return approval !== undefined
    })
    pending.push([id, approval, net.finished(id)])
  }
  release = net.hold()
  const arrived1 = net.arrived
  const approvals = await measure(pid, idle, async () => {
    for (const [id, approval] of pending) await api.approve(id, approval)
    await until('the next model calls', () => net.arrived - arrived1 >= BATCH.approval)
  })
  out.approval = approvals.cpu / BATCH.approval
  log('approvals', out.approval)
  release()
  await Promise.all(pending.map((p) => p[2]))
  // What those runs still do after their callback (index rows, events) must not fall into the
  // next round's first batch.
  await sleep(SETTLE_MS)
  return out
}

/**
 * The same kinds under `perf` (bench/workerd-perf.mjs), in a second workerd that writes V8's perf
 * map so that each sample can be told to be the Worker's JavaScript or Miniflare's: the workerd
 * CPU of each kind, the part of it in the Worker's isolate (the closest local figure to what a
 * deployment bills as the Worker's CPU), and what a two-call run's CPU is spent on.
 */
async function perfBreakdown() {
  if (!(await perfUsable())) {
    return ['  (no perf breakdown: `perf record` is not available or not permitted here)']
  }
  const net = network()
  const before = process.env.MINIFLARE_WORKERD_V8_FLAGS
  process.env.MINIFLARE_WORKERD_V8_FLAGS = V8_PERF_FLAGS
  let started
  try {
    started = await startBenchWorker(net.outbound, { MODEL_STREAM: 'off' })
  } finally {
    if (before === undefined) delete process.env.MINIFLARE_WORKERD_V8_FLAGS
    else process.env.MINIFLARE_WORKERD_V8_FLAGS = before
  }
  const { rt, stop } = started
  try {
    const api = client(await rt.url())
    const runs = async (n) => {
      for (let i = 0; i < n; i++) await net.finished(await api.start('two-call'))
    }
    const ids = []
    for (let i = 0; i < 10; i++) {
      const id = await api.start('two-call')
      await net.finished(id)
      ids.push(id)
    }
    for (let i = 0; i < 300; i++) await Promise.all([api.healthz(), api.view(ids[i % ids.length])])
    await runs(10)
    await sleep(SETTLE_MS)
    const kinds = [
      ['GET /healthz', PERF_REQUESTS, () => api.healthz()],
      ['GET /v1/runs/:id', PERF_REQUESTS, (i) => api.view(ids[i % ids.length])],
      ['two-call run (start to callback)', PERF_RUNS, () => runs(1)],
    ]
    const measured = []
    for (const [label, n, one] of kinds) {
      const p = await perfShares(rt.pid, async () => {
        for (let i = 0; i < n; i++) await one(i)
        await sleep(label.startsWith('two-call') ? SETTLE_MS : 50)
      })
      measured.push({ label, p, cpu: p.cpuMs / n, worker: (p.cpuMs * p.owners[0]) / n })
    }
    const run = measured[2].p
    return [
      `  the same under perf, in a second workerd writing V8's perf map (cpu-clock samples, ${PERF_REQUESTS} requests or ${PERF_RUNS} runs a kind):`,
      `  ${'kind'.padEnd(36)} ${'workerd CPU'.padStart(11)}   ${"the Worker's isolate".padStart(20)}   ${'the rest'.padStart(8)}  vs all of /healthz`,
      ...measured.map(({ label, cpu, worker }) => {
        // What runs with none of the Worker's JavaScript on the stack: no change to that code
        // alone can take a request below it.
        const rest = cpu - worker
        return (
          `  ${label.padEnd(36)} ${cpu.toFixed(2).padStart(8)} ms   ${worker.toFixed(2).padStart(17)} ms` +
          `   ${rest.toFixed(2).padStart(5)} ms  ${(rest / measured[0].cpu).toFixed(1).padStart(5)}x`
        )
      }),
      `  a two-call run's workerd CPU by kind of work (${run.samples} samples):`,
      ...KINDS.map(
        (label, i) => `    ${label.padEnd(52)} ${(100 * run.shares[i]).toFixed(1).padStart(5)}%`,
      ),
      `  and by whose code is on the stack:`,
      ...OWNERS.map(
        (label, i) => `    ${label.padEnd(52)} ${(100 * run.owners[i]).toFixed(1).padStart(5)}%`,
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
  const c0 = cpuMs(rt.pid)
  const t0 = performance.now()
  const timeout = sleep(SCALE_TIMEOUT_MS).then(() => 'timeout')
  const all = Promise.all(
    Array.from({ length: SCALE_RUNS }, async () => {
      try {
        const id = await api.start('two-call')
        const result = await net.finished(id)
        if (!result.ok) errors++
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
    await round(rt, net, api, 0)
    const idle = await idleRate(rt.pid)
    const rounds = []
    for (let i = 0; i < ROUNDS; i++) rounds.push(await round(rt, net, api, idle))
    const m = (k) => median(rounds.map((r) => r[k]))
    const health = Math.max(m('healthz'), 0.01)
    const verdict = (ok) => (ok ? 'PASS' : 'FAIL')
    const row = (label, k, goal) => {
      const ratio = m(k) / health
      const judged = goal ? ` (goal ≤ ${goal}x) ${verdict(ratio <= goal)}` : ''
      return `  ${label.padEnd(34)} ${m(k).toFixed(2).padStart(7)} ms  ${ratio.toFixed(1).padStart(5)}x${judged}`
    }
    const lines = [
      `service cost: Worker CPU per request kind in one workerd (Miniflare, the deployed bundle), instant fake model on 127.0.0.1`,
      `  medians of ${ROUNDS} interleaved rounds; batches of ${Object.entries(BATCH)
        .map(([k, n]) => `${n} ${k}`)
        .join(', ')}; idle ${idle.toFixed(1)} ms/s subtracted; load ${loadAverage()}`,
      `  ${'kind'.padEnd(34)} ${'CPU'.padStart(10)}  vs GET /healthz`,
      row('GET /healthz', 'healthz', 0),
      row('two-call run (start to callback)', 'run', GOAL_RUN),
      row('POST /v1/runs (to its model call)', 'start', GOAL_REQUEST),
      row('GET /v1/runs/:id', 'view', GOAL_REQUEST),
      row('POST approvals (to next model call)', 'approval', GOAL_REQUEST),
      `  a two-call run takes ${m('runWallMs').toFixed(1)} ms of wall time, one at a time`,
    ]
    if (scaleRuns) {
      const s = await scale(rt, net, api, idle)
      const ok = !s.timedOut && s.errors === 0 && s.duplicates === 0
      lines.push(
        `scale: ${SCALE_RUNS} concurrent two-call runs, a ${SCALE_MODEL_MS} ms model, one workerd`,
        `  all finished in ${(s.wallMs / 1000).toFixed(1)} s${s.timedOut ? ' (TIMED OUT)' : ''}; ` +
          `N × CPU per run = ${((SCALE_RUNS * m('run')) / 1000).toFixed(1)} s; ` +
          `workerd CPU meanwhile ${(s.cpu / 1000).toFixed(1)} s`,
        `  ${verdict(ok)} scale: ${s.errors} errors, ${s.duplicates} duplicate model calls (goal 0 and 0, within ${SCALE_TIMEOUT_MS / 1000} s)`,
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
