// The benches' workerd (startBenchWorker), their fake model's answer, and Worker CPU as the
// operating system counts it: the CPU time of the workerd process's threads, read from
// /proc/<pid>/task/*/schedstat in nanoseconds (Linux; where the kernel keeps no schedstat, user +
// system time from /proc/<pid>/stat in 10 ms ticks, so a figure is read over a batch of requests
// worth a few hundred milliseconds, never per request). The process holds the Worker, its Durable
// Objects and Miniflare's entry worker; the Node clients and fakes run elsewhere.
import { readdirSync, readFileSync } from 'node:fs'

/**
 * CPU time of a process, in milliseconds: the sum over its threads of the nanoseconds the
 * scheduler ran them (`/proc/<pid>/task/<tid>/schedstat`), or, where the kernel does not keep
 * those, user + system time from `/proc/<pid>/stat` in 10 ms ticks.
 */
export function cpuMs(pid) {
  try {
    let ns = 0
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0])
      } catch {
        // the thread ended while listing
      }
    }
    if (ns > 0) return ns / 1e6
  } catch {
    // no schedstat: fall back to the tick counters
  }
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
  // utime and stime are fields 14 and 15 of the file; 12 and 13 after "pid (comm) ".
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100
}

/**
 * The least CPU time `cpuMs(pid)` can tell from none, in ms: a nanosecond where the kernel keeps
 * schedstat, else a 10 ms tick. A figure per request over a batch of n is this divided by n.
 */
export function cpuResolutionMs(pid) {
  try {
    const tid = readdirSync(`/proc/${pid}/task`)[0]
    if (Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]) > 0)
      return 1e-6
  } catch {
    // no schedstat
  }
  return 10
}

/** The middle value (the upper one of an even count). */
export const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

/** CPU ms per wall-clock second workerd spends while nothing is asked of it (timers, GC). */
export async function idleRate(pid, ms = 1000) {
  const c0 = cpuMs(pid)
  const t0 = performance.now()
  await sleep(ms)
  return (cpuMs(pid) - c0) / ((performance.now() - t0) / 1000)
}

/**
 * Worker CPU of `work()`, less what workerd spends idle over the same wall time; `settleMs`
 * after it lets work the requests set off (alarms, outbox deliveries) finish inside the window.
 */
export async function measure(pid, idlePerSecond, work, settleMs = 50) {
  const c0 = cpuMs(pid)
  const t0 = performance.now()
  const out = await work()
  await sleep(settleMs)
  const wallMs = performance.now() - t0
  return { cpu: Math.max(0, cpuMs(pid) - c0 - (idlePerSecond * wallMs) / 1000), wallMs, out }
}

/** Where the benches' fake model and callback receiver answer (Miniflare's outbound service). */
export const MODEL_HOST = 'api.openai.test'
export const CALLBACK_HOST = 'receiver.test'

/**
 * The deployed bundle in one workerd under Miniflare (test/node/worker-runtime.ts), configured
 * for a fake OpenAI-compatible model at MODEL_HOST, calculator and http_post, callbacks to
 * CALLBACK_HOST, token `bench-token`; `bindings` adds or overrides; `worker` runs another build
 * (a WorkerBuild: the peer, or the bundle with its SQL counted); `onLog` gets each line workerd
 * logs. `stop()` ends it; `storage` is the folder of its Durable Objects' databases.
 */
export async function startBenchWorker(outbound, bindings = {}, { worker, onLog } = {}) {
  const { WorkerRuntime, bundleWorker, tempStorage } =
    await import('../test/node/worker-runtime.ts')
  const storage = await tempStorage()
  // Without the console's static assets: none of the benches' requests reads them, and with
  // them Miniflare puts its asset router, a worker of its own, in front of every request (about
  // 0.4–0.6 ms of process CPU a request here), which the Worker's CPU does not hold in a
  // deployment (`run_worker_first`: the platform invokes the Worker itself).
  const rt = await WorkerRuntime.start({
    worker: worker ?? { ...(await bundleWorker()), assets: undefined },
    storage: storage.path,
    outbound,
    ...(onLog ? { onLog } : {}),
    bindings: {
      MODEL: 'gpt-bench',
      OPENAI_API_KEY: 'sk-bench-0000000000000000',
      OPENAI_BASE_URL: `https://${MODEL_HOST}/v1`,
      MODEL_MAX_RETRIES: '0',
      API_TOKEN: 'bench-token',
      WEBHOOK_SECRET: 'bench-webhook-secret',
      CALLBACK_ALLOWLIST: CALLBACK_HOST,
      ENABLED_TOOLS: 'calculator,http_post',
      HTTP_ALLOWLIST: CALLBACK_HOST,
      LOG_LEVEL: 'silent',
      ...bindings,
    },
  })
  return {
    rt,
    storage: storage.path,
    stop: async () => {
      await rt.stop()
      await storage.remove()
    },
  }
}

/**
 * The runs' callbacks (`x-edgeloop-run-id`, the result as the body): `finished(id)` is the
 * callback body of run `id` (one that came before it was asked for is kept), `receive` takes a
 * callback request and answers it.
 */
export function callbackReceiver() {
  const waiting = new Map()
  const results = new Map()
  return {
    finished: (id) => {
      const done = results.get(id)
      if (done) return done
      const next = new Promise((resolve) => waiting.set(id, resolve))
      results.set(id, next)
      return next
    },
    receive: (request, body) => {
      const id = request.headers.get('x-edgeloop-run-id')
      const result = JSON.parse(body)
      if (waiting.has(id)) waiting.get(id)(result)
      else results.set(id, Promise.resolve(result))
      waiting.delete(id)
      return new Response(null, { status: 204 })
    },
  }
}

/** A chat-completions answer carrying `message`, as the fake models send it. */
export function chatCompletion(turn, message) {
  return Response.json({
    id: `chatcmpl-${turn}`,
    object: 'chat.completion',
    created: 0,
    model: 'gpt-bench',
    choices: [{ index: 0, message, finish_reason: message.tool_calls ? 'tool_calls' : 'stop' }],
    usage: { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 },
  })
}
