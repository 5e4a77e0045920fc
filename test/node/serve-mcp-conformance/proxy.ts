/**
 * The conformance suite's server scenarios send no credentials, and /mcp takes only a bearer
 * token: this proxy on 127.0.0.1 adds the token and passes everything else through as sent, the
 * Host and Origin headers included (the DNS-rebinding scenario sends foreign ones), streaming
 * both ways.
 */
import { createServer, request, type Server } from 'node:http'

/** Listens on a free port; forwards every request to `target`'s host and port with `token`. */
export async function bearerProxy(
  target: URL,
  token: string,
): Promise<{ port: number; close: () => Promise<void> }> {
  const server: Server = createServer((incoming, outgoing) => {
    const forwarded = request(
      {
        host: target.hostname,
        port: target.port,
        method: incoming.method,
        path: incoming.url,
        headers: { ...incoming.headers, authorization: `Bearer ${token}` },
      },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(outgoing)
      },
    )
    forwarded.on('error', (err) => {
      if (!outgoing.headersSent) outgoing.writeHead(502)
      outgoing.end(String(err))
    })
    incoming.pipe(forwarded)
    outgoing.on('close', () => forwarded.destroy())
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  if (!address || typeof address === 'string') throw new Error('the proxy has no port')
  return {
    port: address.port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
