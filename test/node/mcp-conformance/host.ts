/**
 * Runs the Worker in workerd for conformance scenarios, one scenario at a time, from one Node
 * process: each scenario gets a Worker of its own with that scenario's settings
 * (scenario-settings.ts) and a fresh storage, without the new Node process loading Miniflare
 * that a Worker started by each client command costs (about 3 s of the 6 s a start took,
 * measured: docs/mcp.md#conformance).
 *
 * The runner (run.ts) starts hosts; the client command of each scenario (client.ts), a process
 * the suite starts, asks its host over a small local HTTP API: `POST /scenario` with the
 * scenario's name, server URL and context answers a first line `{"workerUrl": …}` once the
 * Worker runs, then a line `{"log": …}` for each line the Worker logs; it is held open while the
 * scenario lasts: when the client ends it (or dies, the suite's timeout), the Worker is stopped,
 * so nothing it holds open (a stream to the scenario's server) outlives the scenario.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tempStorage, WorkerRuntime, type WorkerBuild } from '../worker-runtime.ts'
import { scenarioBindings, type Scenario } from './scenario-settings.ts'

/**
 * The Worker's outbound requests: only to the scenario's own servers on this machine, anything
 * else refused. All are cut when `ended` aborts: a stream the Worker held open to the scenario's
 * server (the GET stream) would otherwise keep this process's connection, and the suite waits
 * for its server's connections to close before it ends the scenario.
 */
function outboundUntil(ended: AbortSignal) {
  return async (request: Request): Promise<Response> => {
    const { hostname } = new URL(request.url)
    if (hostname !== 'localhost' && hostname !== '127.0.0.1') {
      return new Response(`conformance client: no network to ${hostname}`, { status: 502 })
    }
    // Miniflare hands over its own Request class, which Node's fetch does not take as is.
    const body = ['GET', 'HEAD'].includes(request.method) ? undefined : await request.arrayBuffer()
    const res = await fetch(request.url, {
      method: request.method,
      headers: [...request.headers],
      ...(body ? { body } : {}),
      redirect: 'manual',
      signal: AbortSignal.any([request.signal, ended]),
    })
    return new Response(res.body, { status: res.status, headers: res.headers })
  }
}

/** A port nothing listens on now, for the Worker's own URL (PUBLIC_URL) before it starts. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer()
    probe.once('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo
      probe.close(() => resolve(port))
    })
  })
}

/** A Worker running one scenario's settings; `end()` stops it and deletes its storage. */
export interface ScenarioWorker {
  url: string
  end(): Promise<void>
}

/**
 * Starts the Worker with `scenario`'s settings on a free port, with a fresh storage; `onLog`
 * gets each line it logs.
 */
export async function startScenarioWorker(
  worker: WorkerBuild,
  scenario: Scenario,
  onLog: (line: string) => void,
): Promise<ScenarioWorker> {
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  const storage = await tempStorage()
  const ended = new AbortController()
  const runtime = await WorkerRuntime.start({
    worker,
    storage: storage.path,
    port,
    bindings: scenarioBindings(scenario, url),
    outbound: outboundUntil(ended.signal),
    onLog,
  }).catch(async (err: unknown) => {
    await storage.remove()
    throw err
  })
  return {
    url,
    end: async () => {
      ended.abort()
      await runtime.stop()
      await storage.remove()
    },
  }
}

/** The local HTTP API one client at a time speaks (see the file comment). */
export class ConformanceHost {
  readonly #worker: WorkerBuild
  readonly #running = new Set<Promise<void>>()
  #control: Server | undefined

  constructor(worker: WorkerBuild) {
    this.#worker = worker
  }

  /** Starts listening on 127.0.0.1; its URL. */
  async listen(): Promise<string> {
    const control = createServer((req, res) => {
      const done = this.#serve(req, res).finally(() => this.#running.delete(done))
      this.#running.add(done)
    })
    await new Promise<void>((resolve) => control.listen(0, '127.0.0.1', resolve))
    this.#control = control
    return `http://127.0.0.1:${(control.address() as AddressInfo).port}`
  }

  async #serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== 'POST' || req.url !== '/scenario') {
      res.writeHead(404).end()
      return
    }
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    let running: ScenarioWorker
    // What the Worker logs follows on the held answer, a line each, for the client's stderr;
    // what it logs while it starts waits for the first line.
    const early: string[] = []
    let started = false
    const log = (line: string) => {
      if (!started) early.push(line)
      else if (!res.writableEnded) res.write(`${JSON.stringify({ log: line })}\n`)
    }
    try {
      const scenario = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Scenario
      running = await startScenarioWorker(this.#worker, scenario, log)
    } catch (err) {
      res.writeHead(500, { 'content-type': 'text/plain' }).end(String((err as Error).stack ?? err))
      return
    }
    const ended = new Promise<void>((resolve) => res.once('close', resolve))
    res.writeHead(200, { 'content-type': 'application/x-ndjson' })
    res.write(`${JSON.stringify({ workerUrl: running.url })}\n`)
    started = true
    for (const line of early.splice(0)) log(line)
    await ended
    await running.end()
  }

  /** Stops listening, once every scenario's Worker has been stopped. */
  async close(): Promise<void> {
    const control = this.#control
    if (control) await new Promise((resolve) => control.close(resolve))
    await Promise.all(this.#running)
  }
}
