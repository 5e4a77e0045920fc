// Event fan-out: what 60 live subscribers cost a run, against the same run unwatched, in one
// workerd process (the deployed bundle under Miniflare, test/node/worker-runtime.ts). The model is
// a fake that answers at once: an http_post that waits for approval, then STEPS calculator calls,
// then the answer. While the run waits, the subscribers connect and catch up (opening a stream is
// a request like any other: its cost is printed apart); the measured part is from the approval to
// the run's callback (the same for both cases, no polling): wall time, and Worker CPU as the
// workerd process's CPU time read from /proc (the Worker and the run's Durable Object, never the
// Node clients reading the streams). Each round runs one watched and one unwatched run back to
// back (in turn which goes first), so both see the same load on a shared machine; the verdict is
// the median of the rounds' ratios.
import { spawn } from 'node:child_process'
import { loadavg } from 'node:os'
import {
  CALLBACK_HOST,
  chatCompletion,
  cpuMs,
  median,
  MODEL_HOST,
  sleep,
  startBenchWorker,
} from './workerd-cpu.mjs'
import { judge, waitReady, within } from './verdict.mjs'
import { KINDS, OWNERS, perfShares, perfUsable, startPerfWorker } from './workerd-perf.mjs'

const STEPS = 20
const SUBSCRIBERS = 60
const ROUNDS = 15
const TIME_GOAL = 1.3
const CPU_GOAL = 2
/** The runs' budgets fit the script; the stream limits let every subscriber in. */
const BINDINGS = {
  MAX_STEPS: String(STEPS + 5),
  MAX_SECONDS: '3600',
  EVENT_STREAMS_PER_RUN: String(SUBSCRIBERS),
  EVENT_STREAMS_PER_TOKEN: String(SUBSCRIBERS),
}
/** Runs of each case sampled with perf after the rounds. */
const PERF_RUNS = 8

/** A chat-completions answer: a calculator call until STEPS are done, then the answer. */
function modelAnswer(body) {
  const { messages } = JSON.parse(body)
  const done = messages.filter((m) => m.role === 'assistant').length
  const call = {
    id: `call_${done}`,
    type: 'function',
    function: { name: 'calculator', arguments: JSON.stringify({ expression: `${done} + 1` }) },
  }
  const post = {
    id: 'call_post',
    type: 'function',
    function: {
      name: 'http_post',
      arguments: JSON.stringify({ url: `https://${CALLBACK_HOST}/record`, body: { n: 1 } }),
    },
  }
  const message =
    done === 0
      ? { role: 'assistant', content: 'Record first.', tool_calls: [post] }
      : done <= STEPS
        ? { role: 'assistant', content: `Step ${done}: adding one more.`, tool_calls: [call] }
        : { role: 'assistant', content: `Counted to ${STEPS}.` }
  return chatCompletion(done, message)
}

/** The Worker's outside world: the model, and the callbacks that say a run is over. */
function network() {
  const waiting = new Map()
  return {
    finished: (id) => new Promise((resolve) => waiting.set(id, resolve)),
    outbound: async (request) => {
      const url = new URL(request.url)
      const body = await request.text()
      if (url.host === MODEL_HOST) return modelAnswer(body)
      if (url.host === CALLBACK_HOST && url.pathname === '/record')
        return Response.json({ ok: true })
      if (url.host === CALLBACK_HOST) {
        // callback_events is not asked for: the one callback is the final result.
        waiting.get(request.headers.get('x-edgeloop-run-id'))?.()
        return new Response(null, { status: 204 })
      }
      return new Response('unexpected host', { status: 502 })
    },
  }
}

/**
 * One run, watched by `subscribers` streams or none. `sample` wraps the measured part (from the
 * approval until every stream ended and the deliveries settled), e.g. to sample it with perf.
 */
async function oneRun(rt, net, subscribers, sample = (work) => work()) {
  const headers = { Authorization: 'Bearer bench-token', 'Content-Type': 'application/json' }
  const res = await rt.fetch('/v1/runs', {
    method: 'POST',
    headers,
    body: JSON.stringify({
      task: `Record, then count to ${STEPS}`,
      tools: ['http_post', 'calculator'],
      callback_url: `https://${CALLBACK_HOST}/done`,
    }),
  })
  const body = await res.json()
  if (res.status !== 202) {
    throw new Error(`POST /v1/runs answered ${res.status}: ${JSON.stringify(body)}`)
  }
  const { id } = body
  const finished = net.finished(id)
  let approval
  await waitReady(
    `run ${id} to ask for its approval`,
    async () => {
      const view = await (await rt.fetch(`/v1/runs/${id}`, { headers })).json()
      approval = view.pendingApprovals?.[0]
      return approval !== undefined
    },
    { seconds: 10, pollMs: 10 },
  )
  const open0 = cpuMs(rt.pid)
  const watchers = subscribers
    ? await watch(new URL(`/v1/runs/${id}/events`, await rt.url()), subscribers)
    : undefined
  const openCpu = cpuMs(rt.pid) - open0
  const approve = new URL(`/v1/runs/${id}/approvals/${approval.callId}`, await rt.url())
  let ms
  const cpu0 = cpuMs(rt.pid)
  const sampled = await sample(async () => {
    const t0 = performance.now()
    const decided = await fetch(approve, {
      method: 'POST',
      headers,
      body: JSON.stringify({ decision: 'approve', args_hash: approval.argsHash }),
    })
    if (decided.status !== 200) throw new Error(`approval answered ${decided.status}`)
    await within(`run ${id}'s callback`, finished)
    ms = performance.now() - t0
    if (watchers) await within(`the ${subscribers} streams of run ${id} to end`, watchers.ended)
    // Let the last deliveries settle before reading the CPU counter.
    await sleep(50)
  })
  return { ms, cpu: cpuMs(rt.pid) - cpu0, openCpu, sampled }
}

/**
 * `n` clients reading the stream at `url`. They stand for clients on other machines, so they cost
 * this one as little as can be: a process of their own (the fake model answers from this
 * process's event loop, which they must not slow down) at the lowest CPU priority (on a shared
 * 2-core machine their reading would otherwise take its time from workerd), reading with
 * node:http (fetch's web streams took twice the CPU). Resolves once every stream is live (it got
 * the approval request); `ended` once every one got run_finished and closed.
 */
function watch(url, n) {
  const readers = spawn(
    'nice',
    ['-n', '19', process.execPath, '-e', READERS, String(url), String(n)],
    {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    },
  )
  const failed = new Promise((_, reject) => {
    readers.on('error', reject)
    readers.on('exit', (code) => code && reject(new Error(`the readers exited with ${code}`)))
  })
  const said = (what) =>
    new Promise((resolve) => readers.on('message', (m) => m === what && resolve()))
  const ended = Promise.race([said('ended'), failed]).finally(() => readers.kill())
  return Promise.race([said('live').then(() => ({ ended })), failed])
}

const READERS = `
const http = require('node:http')
const url = process.argv[1]
const n = Number(process.argv[2])
const headers = { Authorization: 'Bearer bench-token' }
let live = 0
let ended = 0
const fail = (err) => { throw err }
for (let i = 0; i < n; i++) {
  http.get(url, { headers }, (res) => {
    if (res.statusCode !== 200) fail(new Error('events answered ' + res.statusCode))
    res.setEncoding('utf8')
    let text = ''
    let isLive = false
    res.on('data', (piece) => {
      text += piece
      if (!isLive && text.includes('event: approval_requested')) {
        isLive = true
        if (++live === n) process.send('live')
      }
    })
    res.on('end', () => {
      if (!text.includes('event: run_finished')) fail(new Error('a stream ended before run_finished'))
      if (++ended === n) process.send('ended')
    })
    res.on('error', fail)
  }).on('error', fail)
}
`

/** Runs the fan-out bench; the report's lines say PASS or FAIL per goal. */
export async function benchFanOut() {
  const net = network()
  const { rt, stop } = await startBenchWorker(net.outbound, BINDINGS)
  try {
    const load0 = loadavg()[0].toFixed(2)
    // One of each first, not counted: the isolate compiles and warms up.
    await oneRun(rt, net, 0)
    await oneRun(rt, net, SUBSCRIBERS)
    const plain = []
    const watched = []
    for (let i = 0; i < ROUNDS; i++) {
      // Which case goes first alternates: neither always runs right after the other's streams.
      if (i % 2) watched.push(await oneRun(rt, net, SUBSCRIBERS))
      plain.push(await oneRun(rt, net, 0))
      if (!(i % 2)) watched.push(await oneRun(rt, net, SUBSCRIBERS))
    }
    // A round whose unwatched figure is zero has no ratio: the verdicts below refuse to judge it.
    const ratio = (key) => median(watched.map((w, i) => w[key] / plain[i][key]))
    const least = (rs, key) => Math.min(...rs.map((r) => r[key]))
    const measured = (key) => ({
      [`least unwatched ${key}`]: least(plain, key),
      [`least watched ${key}`]: least(watched, key),
    })
    const time = ratio('ms')
    const cpu = ratio('cpu')
    const m = (rs, key) => median(rs.map((r) => r[key]))
    const f = (rs, key) => `${m(rs, key).toFixed(0)} ms`
    const spread = (rs, key) => {
      const xs = rs.map((r) => r[key]).sort((a, b) => a - b)
      return `${xs[0].toFixed(0)}–${xs.at(-1).toFixed(0)}`
    }
    const ofMedians = (key) => (m(watched, key) / m(plain, key)).toFixed(2)
    const perSubscriber = (m(watched, 'cpu') - m(plain, 'cpu')) / SUBSCRIBERS
    return [
      `event fan-out: a ${STEPS}-step run, unwatched and with ${SUBSCRIBERS} live subscribers (one workerd under Miniflare, instant fake model, ${ROUNDS} rounds of one run each, back to back; ratio = median of the rounds' ratios; load average ${load0} before, ${loadavg()[0].toFixed(2)} after the rounds)`,
      `  wall time   unwatched ${f(plain, 'ms')} (${spread(plain, 'ms')}), watched ${f(watched, 'ms')} (${spread(watched, 'ms')}): ${time.toFixed(2)}x (goal <= ${TIME_GOAL}x) ${judge(measured('ms'), () => time <= TIME_GOAL)}`,
      `  Worker CPU  unwatched ${f(plain, 'cpu')} (${spread(plain, 'cpu')}), watched ${f(watched, 'cpu')} (${spread(watched, 'cpu')}): ${cpu.toFixed(2)}x (goal <= ${CPU_GOAL}x) ${judge(measured('cpu'), () => cpu <= CPU_GOAL)}`,
      `  (ratio of the medians: wall ${ofMedians('ms')}x, CPU ${ofMedians('cpu')}x; ${(perSubscriber * 1000).toFixed(0)} µs of CPU per subscriber and run; not in the ratios: opening the ${SUBSCRIBERS} streams while the run waited cost ${f(watched, 'openCpu')} of CPU)`,
      ...(await perfBreakdown()),
    ].join('\n')
  } finally {
    await stop()
  }
}

/**
 * Where the watched run's extra CPU goes: PERF_RUNS runs of each case sampled with perf
 * (bench/workerd-perf.mjs) in a second workerd that writes V8's perf map, the measured part of
 * each, by kind of work and by whose code is on the stack; the difference per subscriber.
 */
async function perfBreakdown() {
  if (!(await perfUsable())) {
    return ['  (no perf breakdown: `perf record` is not available or not permitted here)']
  }
  const net = network()
  const { rt, stop } = await startPerfWorker(net.outbound, BINDINGS)
  try {
    await oneRun(rt, net, 0)
    await oneRun(rt, net, SUBSCRIBERS)
    const sample = (work) => perfShares(rt.pid, work)
    const cases = { unwatched: [], watched: [] }
    for (let i = 0; i < PERF_RUNS; i++) {
      cases.unwatched.push((await oneRun(rt, net, 0, sample)).sampled)
      cases.watched.push((await oneRun(rt, net, SUBSCRIBERS, sample)).sampled)
    }
    // CPU ms per run of each kind (or owner), over all sampled runs of a case.
    const per = (name, field, i) =>
      cases[name].reduce((x, p) => x + p.cpuMs * p[field][i], 0) / cases[name].length
    const row = (label, field, i) => {
      const [u, w] = [per('unwatched', field, i), per('watched', field, i)]
      const each = ((w - u) * 1000) / SUBSCRIBERS
      return `    ${label.padEnd(52)} ${u.toFixed(1).padStart(6)} ${w.toFixed(1).padStart(8)} ${each.toFixed(0).padStart(10)} µs`
    }
    const total = (name) => cases[name].reduce((x, p) => x + p.cpuMs, 0) / cases[name].length
    return [
      `  under perf (cpu-clock samples of the measured part, ${PERF_RUNS} runs of each, a second workerd writing V8's perf map), ms of workerd CPU per run:`,
      `    ${''.padEnd(52)} ${'unwatched'.padStart(6)} ${'watched'.padStart(8)} ${'per subscriber'.padStart(13)}`,
      `    ${'all'.padEnd(52)} ${total('unwatched').toFixed(1).padStart(6)} ${total('watched').toFixed(1).padStart(8)} ${(((total('watched') - total('unwatched')) * 1000) / SUBSCRIBERS).toFixed(0).padStart(10)} µs`,
      `   by kind of work:`,
      ...KINDS.map((label, i) => row(label, 'shares', i)),
      `   by whose code is on the stack:`,
      ...OWNERS.map((label, i) => row(label, 'owners', i)),
    ]
  } finally {
    await stop()
  }
}
