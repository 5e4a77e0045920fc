import type { CrashSession } from './crash-session'

export interface StreamedEvent {
  id: string
  type: string
  /** The event's `data` (step, callId…), as the service sent it. */
  data: Record<string, unknown>
}

/**
 * The run's events from `GET /v1/runs/:id/events` (SSE, from the start), read until the stream
 * ends (it does after `run_finished`) or pauses for half a second.
 */
export async function readEvents(session: CrashSession, runId: string): Promise<StreamedEvent[]> {
  const abort = new AbortController()
  const res = await session.api(`/v1/runs/${runId}/events`, {
    headers: { accept: 'text/event-stream' },
    signal: abort.signal,
  })
  if (!res.headers.get('content-type')?.includes('text/event-stream')) {
    throw new Error(`GET /v1/runs/${runId}/events: ${res.status} ${await res.text()}`)
  }
  const events: StreamedEvent[] = []
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader()
  let buffered = ''
  for (;;) {
    const timer = setTimeout(() => abort.abort(), 500)
    const next = await reader.read().catch(() => ({ done: true, value: undefined }))
    clearTimeout(timer)
    if (next.done) break
    buffered += next.value
    const blocks = buffered.split('\n\n')
    buffered = blocks.pop()!
    for (const block of blocks) {
      const id = /^id: ?(.*)$/m.exec(block)?.[1]
      if (id === undefined) continue
      const type = /^event: ?(.*)$/m.exec(block)?.[1] ?? ''
      const json = /^data: ?(.*)$/m.exec(block)?.[1]
      const data = json ? ((JSON.parse(json) as { data?: Record<string, unknown> }).data ?? {}) : {}
      events.push({ id, type, data })
    }
  }
  return events
}
