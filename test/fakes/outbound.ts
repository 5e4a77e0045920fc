/**
 * A strict fake for outbound `fetch`: every request must match a registered host, or the
 * request fails and the test fails at `assertNoUnexpected()` / `restore()`.
 *
 * Tests and the Worker (including its Durable Objects) share one isolate under
 * @cloudflare/vitest-plugin, so replacing `globalThis.fetch` reaches the code under test.
 * Production code must call `fetch` late (`(...a) => fetch(...a)`), never capture it at import.
 */
import { vi } from 'vitest'

export type FakeHandler = (req: Request) => Response | Promise<Response>

export interface RecordedRequest {
  method: string
  url: string
  headers: Record<string, string>
  body: string
}

export class Outbound {
  readonly requests: RecordedRequest[] = []
  readonly unexpected: string[] = []
  readonly #hosts = new Map<string, FakeHandler>()
  #spy: ReturnType<typeof vi.spyOn> | undefined

  /** Route every request for `host` (e.g. `api.openai.test`) to `handler`. */
  on(host: string, handler: FakeHandler): this {
    this.#hosts.set(host, handler)
    return this
  }

  install(): this {
    this.#spy = vi.spyOn(globalThis, 'fetch').mockImplementation(async (input, init) => {
      const req = new Request(input as RequestInfo, init as RequestInit)
      const body = req.body ? await req.clone().text() : ''
      this.requests.push({
        method: req.method,
        url: req.url,
        headers: Object.fromEntries(req.headers),
        body,
      })
      const handler = this.#hosts.get(new URL(req.url).host)
      if (!handler) {
        this.unexpected.push(`${req.method} ${req.url}`)
        throw new TypeError(`Outbound fake: unexpected request ${req.method} ${req.url}`)
      }
      return handler(req)
    })
    return this
  }

  /** Requests sent to one host, in order. */
  to(host: string): RecordedRequest[] {
    return this.requests.filter((r) => new URL(r.url).host === host)
  }

  assertNoUnexpected(): void {
    if (this.unexpected.length) {
      throw new Error(`unexpected outbound requests: ${this.unexpected.join('; ')}`)
    }
  }

  restore(): void {
    this.#spy?.mockRestore()
    this.assertNoUnexpected()
  }
}
