import type { CrashSession } from './crash-session'

/**
 * The ids of the run's events from `GET /v1/runs/:id/events` (SSE), read until the stream
 * pauses; undefined while the service has no event stream (the route answers 404).
 */
export async function readEventIds(
  session: CrashSession,
  runId: string,
): Promise<string[] | undefined> {
  const abort = new AbortController()
  const res = await session.api(`/v1/runs/${runId}/events`, {
    headers: { accept: 'text/event-stream' },
    signal: abort.signal,
  })
  if (res.status === 404 || !res.headers.get('content-type')?.includes('text/event-stream')) {
    await res.body?.cancel()
    return undefined
  }
  const ids: string[] = []
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
      if (id !== undefined) ids.push(id)
    }
  }
  return ids
}
