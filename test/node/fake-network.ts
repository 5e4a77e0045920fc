/**
 * The Worker's whole outside world when it runs under Miniflare (worker-runtime.ts): every
 * outbound request arrives here, in the Node test process, and goes to the fake registered for
 * its host. Like test/fakes/outbound.ts it is strict: a request for any other host is answered
 * 502 and listed in `unexpected`.
 *
 * `intercept()` lets a test act when a chosen request arrives: before the fake sees it (the
 * request left the Worker but never reached its destination), or after the fake has seen it
 * but before its answer goes back (the request is in flight). That is where the crash test
 * kills the runtime.
 */
import type { FakeHandler } from '../fakes/outbound'

export interface NetworkRequest {
  /** Arrival order across the network's life. */
  n: number
  /** Which runtime sent it (the `generation` passed to `handlerFor`). */
  generation: number
  method: string
  host: string
  path: string
  headers: Record<string, string>
  body: string
  /** Whether the fake for its host saw it. */
  delivered: boolean
  /** Whether its response went back to a Worker still running. */
  answered: boolean
}

export interface Interception {
  /** Which request: the first one (not yet intercepted) it returns true for. */
  match: (request: NetworkRequest) => boolean
  /** `before`: the host's fake never sees it; `in_flight`: it sees it, its answer is held. */
  when: 'before' | 'in_flight'
  /** Runs then; the request gets a 502 once it returns (a killed runtime never reads it). */
  run: (request: NetworkRequest) => void | Promise<void>
}

export class FakeNetwork {
  readonly requests: NetworkRequest[] = []
  readonly unexpected: string[] = []
  readonly #hosts = new Map<string, FakeHandler>()
  #interceptions: Interception[] = []

  /** Routes every request for `host` (e.g. `api.openai.test`) to `handler`. */
  on(host: string, handler: FakeHandler): this {
    this.#hosts.set(host, handler)
    return this
  }

  /** Acts on the first request that `match`es (see `Interception`); one-shot. */
  intercept(interception: Interception): this {
    this.#interceptions.push(interception)
    return this
  }

  /** Interceptions that have not fired yet. */
  get armed(): number {
    return this.#interceptions.length
  }

  /** Drops interceptions that have not fired. */
  disarm(): void {
    this.#interceptions = []
  }

  /**
   * The `outbound` function for one runtime; `generation` tags its requests, and `alive` says
   * whether that runtime still runs (an answer given after it died was never read).
   */
  handlerFor(generation: number, alive: () => boolean): (request: Request) => Promise<Response> {
    return (request) => this.#handle(request, generation, alive)
  }

  async #handle(request: Request, generation: number, alive: () => boolean): Promise<Response> {
    const url = new URL(request.url)
    // Read before numbering: requests arrive concurrently, and `n` must be unique and follow the
    // order of `requests` (a kill records how many there were).
    const body = request.body ? await request.clone().text() : ''
    const record: NetworkRequest = {
      n: this.requests.length,
      generation,
      method: request.method,
      host: url.host,
      path: url.pathname + url.search,
      headers: Object.fromEntries(request.headers),
      body,
      delivered: false,
      answered: false,
    }
    this.requests.push(record)
    const handler = this.#hosts.get(url.host)
    if (!handler) {
      this.unexpected.push(`${request.method} ${request.url}`)
      return new Response(`fake network: no fake for ${url.host}`, { status: 502 })
    }
    const k = this.#interceptions.findIndex((i) => i.match(record))
    const interception = k < 0 ? undefined : this.#interceptions.splice(k, 1)[0]!
    if (interception?.when === 'before') {
      await interception.run(record)
      return lost()
    }
    record.delivered = true
    const response = await handler(request)
    if (interception) {
      await interception.run(record)
      return lost()
    }
    record.answered = alive()
    return response
  }
}

/** What an intercepted request gets once the test is done with it (a killed runtime reads none). */
function lost(): Response {
  return new Response('fake network: connection lost', { status: 502 })
}
