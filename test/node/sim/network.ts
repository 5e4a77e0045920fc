/**
 * The simulated network: global `fetch` for every simulated object. A request leaves when the
 * turn that sent it commits (the output gate), arrives as an event of its own, is answered by the
 * host's handler (the model provider, the receiver of tools and callbacks), and its answer arrives
 * as another event. A schedule may lose a request on the way, lose its answer after the host acted,
 * deliver it twice, or slow it down; a request whose sender crashed before it arrived never does,
 * and an answer to a dead sender is dropped. An aborted signal rejects at once, as `fetch` does.
 */
import type { Sim } from './sim'

export type Handler = (req: Request) => Promise<Response>

export interface Arrival {
  at: number
  host: string
  method: string
  path: string
  headers: Record<string, string>
  body: string
  /** The simulated object generation that sent it. */
  from: string
}

export class SimNetwork {
  readonly arrivals: Arrival[] = []
  /** Every request that left (its turn committed), whether or not it arrived. */
  readonly sent: { host: string; body: string; from: string }[] = []
  /** Idempotency keys of requests a fault hit (lost, answer lost, slow): their outcome is unknown. */
  readonly faulted = new Set<string>()
  /** Hosts a fault hit at all (an MCP session is shared: a fault on it can stall any call). */
  readonly faultedHosts = new Set<string>()
  /** How many faults hit each host's requests (a lost or late answer may make its sender repeat). */
  readonly faultsByHost = new Map<string, number>()
  readonly #hosts = new Map<string, Handler>()
  constructor(private readonly sim: Sim) {}

  on(host: string, handler: Handler): this {
    this.#hosts.set(host, handler)
    return this
  }

  readonly fetch = (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const sim = this.sim
    sim.activity++
    const owner = sim.current
    const req = new Request(input, init)
    const url = new URL(req.url)
    const what = `${req.method} ${url.host}${url.pathname}`
    const signal = init?.signal ?? undefined
    return new Promise<Response>((resolve, reject) => {
      const events: ReturnType<Sim['schedule']>[] = []
      let settled = false
      const settle = (fn: () => void) => {
        if (settled) return
        settled = true
        signal?.removeEventListener('abort', onAbort)
        fn()
      }
      const onAbort = () => {
        for (const e of events) sim.cancel(e)
        settle(() => reject(signal!.reason ?? new DOMException('aborted', 'AbortError')))
      }
      if (signal?.aborted) return onAbort()
      signal?.addEventListener('abort', onAbort)
      const fail = (label: string) =>
        events.push(
          sim.schedule(
            label,
            5,
            () => settle(() => reject(new TypeError('Network connection lost.'))),
            owner,
          ),
        )
      let key = req.headers.get('idempotency-key')
      const hit = <T>(f: T): T => {
        if (f && key) this.faulted.add(key)
        if (f) this.faultedHosts.add(url.host)
        if (f) this.faultsByHost.set(url.host, (this.faultsByHost.get(url.host) ?? 0) + 1)
        return f
      }
      const arrive = async () => {
        const body = await req.clone().text()
        // An MCP tool call carries its key in the JSON-RPC body (`_meta.idempotencyKey`).
        key ??= /"idempotencyKey":"([^"]+)"/.exec(body)?.[1] ?? null
        if (hit(sim.fault('net', `${what} lost on the way`, 2, 0.03))) return fail(`${what} failed`)
        const handler = this.#hosts.get(url.host)
        const headers = Object.fromEntries(req.headers)
        const record = {
          at: sim.now,
          host: url.host,
          method: req.method,
          path: url.pathname,
          headers,
          body,
          from: owner?.name ?? 'worker',
        }
        this.arrivals.push(record)
        if (!handler) return fail(`${what}: no such host`)
        // Only deliveries are sent twice (at least once); a tool's or the model's request is not.
        if (url.pathname === '/callback' && sim.fault('net', `${what} delivered twice`, 2, 0.1)) {
          this.arrivals.push({ ...record })
          void handler(req.clone()).catch(() => {})
        }
        let res: Response
        try {
          res = await handler(req)
        } catch (err) {
          return events.push(
            sim.schedule(`${what} failed`, 5, () => settle(() => reject(err)), owner),
          )
        }
        const status = res.status
        const resHeaders = new Headers(res.headers)
        const bytes = await res.arrayBuffer()
        if (hit(sim.fault('net', `${what} answer lost`, 2, 0.03)))
          return fail(`${what} answer lost`)
        const slow = hit(sim.fault('slow', `${what} answer slow`, 2, 0.1)) ? 20_000 : 0
        events.push(
          sim.schedule(
            `${what} answered ${status}`,
            5 + slow,
            () =>
              settle(() =>
                resolve(
                  new Response(status === 204 ? null : bytes, { status, headers: resHeaders }),
                ),
              ),
            owner,
          ),
        )
      }
      // Sent when the turn commits; a request from outside any object leaves at once.
      const send = () => {
        this.sent.push({
          host: url.host,
          body: typeof init?.body === 'string' ? init.body : '',
          from: owner?.name ?? 'worker',
        })
        events.push(sim.schedule(`${what} arrives`, 5, () => void arrive(), owner))
      }
      if (owner) sim.afterCommit(send)
      else send()
    })
  }
}
