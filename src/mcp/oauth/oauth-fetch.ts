/**
 * The fetch the OAuth client's requests go through (discovery, registration, tokens): each
 * answers within the server's timeout, follows no redirect (a redirect loop, or a hop to another
 * origin, is an error that names it), and its body is read only up to MAX_OAUTH_BODY_BYTES: an
 * authorization server that sends megabytes of metadata is refused, not buffered.
 */
import { McpOAuthError } from './connection-needed'

/** Metadata, registrations and token responses are a few KiB; 256 KiB leaves room for any. */
export const MAX_OAUTH_BODY_BYTES = 256 * 1024

/** `fetch` for the OAuth requests of one server (`base` is looked up when called). */
export function oauthFetch(
  server: { name: string; timeoutMs: number },
  base: (input: string | URL, init?: RequestInit) => Promise<Response> = (i, init) =>
    fetch(i, init),
): (input: string | URL, init?: RequestInit) => Promise<Response> {
  return async (input, init) => {
    const url = new URL(String(input instanceof Request ? input.url : input))
    const signal = init?.signal
      ? AbortSignal.any([init.signal, AbortSignal.timeout(server.timeoutMs)])
      : AbortSignal.timeout(server.timeoutMs)
    let res: Response
    try {
      res = await base(url, { ...init, signal, redirect: 'manual' })
    } catch (err) {
      const why =
        (err as Error)?.name === 'TimeoutError'
          ? `no answer within ${server.timeoutMs}ms`
          : ((err as Error)?.message ?? String(err))
      throw new McpOAuthError(server.name, `${url.origin}${url.pathname}: ${why}`, { cause: err })
    }
    if (res.status >= 300 && res.status < 400) {
      await res.body?.cancel()
      throw new McpOAuthError(
        server.name,
        `${url.origin}${url.pathname} answered a redirect (HTTP ${res.status}); OAuth metadata and token requests follow none`,
      )
    }
    const body = await readCapped(res, server.name, url)
    return new Response(body, {
      status: res.status,
      statusText: res.statusText,
      headers: res.headers,
    })
  }
}

async function readCapped(res: Response, server: string, url: URL): Promise<Uint8Array> {
  const declared = Number(res.headers.get('content-length'))
  const tooBig = () =>
    new McpOAuthError(
      server,
      `${url.origin}${url.pathname} sent more than ${MAX_OAUTH_BODY_BYTES} bytes; refused`,
    )
  if (declared > MAX_OAUTH_BODY_BYTES) {
    await res.body?.cancel()
    throw tooBig()
  }
  if (!res.body) return new Uint8Array()
  const reader = res.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > MAX_OAUTH_BODY_BYTES) {
      await reader.cancel()
      throw tooBig()
    }
    chunks.push(value)
  }
  const out = new Uint8Array(size)
  let at = 0
  for (const c of chunks) {
    out.set(c, at)
    at += c.byteLength
  }
  return out
}
