/** One Server-Sent Events frame: its `id`, `event` and `data` fields (comments dropped). */
export interface SseFrame {
  id?: string
  event?: string
  data: string
}

/** Splits a byte stream into SSE frames (the WHATWG format: fields per line, blank line ends). */
export async function* sseFrames(body: ReadableStream<Uint8Array>): AsyncGenerator<SseFrame> {
  const reader = body.getReader()
  const decoder = new TextDecoder()
  let buffer = ''
  let frame: Partial<SseFrame> & { data?: string } = {}
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) return
      buffer += decoder.decode(value, { stream: true })
      let nl: number
      while ((nl = buffer.search(/\r?\n/)) >= 0) {
        const line = buffer.slice(0, nl)
        buffer = buffer.slice(buffer[nl] === '\r' ? nl + 2 : nl + 1)
        if (line === '') {
          if (frame.data !== undefined) yield frame as SseFrame
          frame = {}
          continue
        }
        if (line.startsWith(':')) continue
        const colon = line.indexOf(':')
        const field = colon < 0 ? line : line.slice(0, colon)
        const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '')
        if (field === 'data')
          frame.data = frame.data === undefined ? value : `${frame.data}\n${value}`
        else if (field === 'id') frame.id = value
        else if (field === 'event') frame.event = value
      }
    }
  } finally {
    reader.releaseLock()
  }
}
