/**
 * A fake from test/fakes/ (a `FakeHandler`: Request → Response) served over real HTTP on
 * 127.0.0.1, for a Worker that runs in its own process (`wrangler dev`) and reaches the fake by
 * URL. Response bodies are streamed as the fake writes them; a client that goes away aborts the
 * request's signal and cancels the body, as a real server would see it.
 */
import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { FakeHandler } from '../fakes/outbound'

export interface FakeHttpServer {
  /** `http://127.0.0.1:<port>` */
  origin: string
  close(): Promise<void>
}

export async function serveFake(handler: FakeHandler): Promise<FakeHttpServer> {
  const server = createServer((req, res) => {
    const gone = new AbortController()
    res.on('close', () => gone.abort())
    void (async () => {
      const request = await toRequest(req, origin(), gone.signal)
      const response = await handler(request)
      res.writeHead(response.status, Object.fromEntries(response.headers))
      if (!response.body) return res.end()
      const reader = response.body.getReader()
      gone.signal.addEventListener('abort', () => void reader.cancel().catch(() => {}))
      for (;;) {
        const { done, value } = await reader.read()
        if (done) break
        res.write(value)
      }
      res.end()
    })().catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' })
      res.end(String(err))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const origin = () => `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    origin: origin(),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

async function toRequest(req: IncomingMessage, base: string, signal: AbortSignal) {
  const chunks: Buffer[] = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  const headers = new Headers()
  for (const [name, value] of Object.entries(req.headers)) {
    if (typeof value === 'string') headers.set(name, value)
    else if (Array.isArray(value)) headers.set(name, value.join(', '))
  }
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD' && chunks.length > 0
  return new Request(new URL(req.url ?? '/', base), {
    method: req.method ?? 'GET',
    headers,
    ...(hasBody ? { body: Buffer.concat(chunks) } : {}),
    signal,
  })
}
