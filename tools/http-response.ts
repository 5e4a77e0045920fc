import { htmlToText } from './html-to-text'

/**
 * One HTTP response as the model reads it: a status line with the content type, optional
 * notes (redirects), a blank line, then the body reduced to text (HTML to readable text, JSON
 * pretty-printed, other text as is). Binary bodies are refused; long bodies are cut.
 */
export async function describeResponse(
  res: Response,
  url: URL,
  options: { maxBytes: number; signal: AbortSignal; notes?: string[] },
): Promise<string> {
  const mime = (res.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase()
  const status = `HTTP ${res.status} ${res.statusText || REASONS[res.status] || ''}`.trimEnd()
  if (mime && !isTextual(mime)) {
    await res.body?.cancel().catch(() => {})
    throw binaryRefused(status, mime, url)
  }
  const { bytes, cut } = await readCapped(res.body, options.maxBytes, options.signal)
  if (!mime && bytes.includes(0)) throw binaryRefused(status, 'unknown binary', url)

  // `stream: true` when cut drops a multi-byte character split at the cap instead of garbling it.
  const raw = new TextDecoder().decode(bytes, { stream: cut })
  const body = await renderBody(raw, mime, cut)
  const head = [`${status} (${mime || 'no content type'})`, ...(options.notes ?? [])].join('\n')
  let text = `${head}\n\n${body || '(empty body)'}`
  if (cut) {
    const declared = Number(res.headers.get('content-length'))
    const total = declared > options.maxBytes ? ` of ${declared} (Content-Length)` : ''
    text +=
      `\n\n[body cut at ${options.maxBytes} bytes${total}; ask for a narrower resource ` +
      '(a smaller page, a query or a range) to see more]'
  }
  return text
}

async function renderBody(raw: string, mime: string, cut: boolean): Promise<string> {
  if (mime === 'text/html' || mime === 'application/xhtml+xml') return htmlToText(raw)
  if (!cut && (mime === 'application/json' || mime.endsWith('+json'))) {
    try {
      return JSON.stringify(JSON.parse(raw), null, 2)
    } catch {
      return raw // not valid JSON after all: show it as the server sent it
    }
  }
  return raw
}

const TEXTUAL =
  /^text\/|[/+](?:json|xml)$|^application\/(?:javascript|ecmascript|x-www-form-urlencoded|x-ndjson|ndjson|yaml|x-yaml|toml|csv|sql|graphql)$/

function isTextual(mime: string): boolean {
  return TEXTUAL.test(mime)
}

function binaryRefused(status: string, mime: string, url: URL): Error {
  return new Error(
    `${url.href} answered ${status} with ${mime} content, which is binary; only text, HTML and ` +
      'JSON can be read. Look for a text or JSON version of this resource.',
  )
}

/** Reads at most `maxBytes` of a body stream, then cancels the rest. */
async function readCapped(
  body: ReadableStream<Uint8Array> | null,
  maxBytes: number,
  signal: AbortSignal,
): Promise<{ bytes: Uint8Array; cut: boolean }> {
  if (!body) return { bytes: new Uint8Array(0), cut: false }
  const reader = body.getReader()
  const onAbort = () => void reader.cancel(signal.reason).catch(() => {})
  signal.addEventListener('abort', onAbort, { once: true })
  const chunks: Uint8Array[] = []
  let size = 0
  let cut = false
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      const room = maxBytes - size
      if (value.byteLength > room) {
        chunks.push(value.subarray(0, room))
        size += room
        cut = true
        break
      }
      chunks.push(value)
      size += value.byteLength
    }
  } finally {
    signal.removeEventListener('abort', onAbort)
  }
  if (signal.aborted) throw new Error(`reading the body was aborted: ${String(signal.reason)}`)
  if (cut) await reader.cancel().catch(() => {})
  const bytes = new Uint8Array(size)
  let at = 0
  for (const chunk of chunks) {
    bytes.set(chunk, at)
    at += chunk.byteLength
  }
  return { bytes, cut }
}

// workerd leaves statusText empty for many responses; the model reads the phrase, not the code.
const REASONS: Record<number, string> = {
  200: 'OK',
  201: 'Created',
  202: 'Accepted',
  204: 'No Content',
  301: 'Moved Permanently',
  302: 'Found',
  303: 'See Other',
  304: 'Not Modified',
  307: 'Temporary Redirect',
  308: 'Permanent Redirect',
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  410: 'Gone',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
}
