import type { RunState } from '../kernel/state'
import { toApiResult } from './api-result'
import type { EventLog } from './events/event-log'
import type { RunStorage } from './storage'
import type { RunView } from './types'

/** What `GET /v1/runs/:id/export` names its document, so an archive can tell what it holds. */
export const EXPORT_FORMAT = 'edgeloop.run-export'
export const EXPORT_VERSION = 1
const EVENT_PAGE = 500

const encoder = new TextEncoder()

/**
 * The whole run as one JSON document, written piece by piece (docs/operations.md#export): the
 * view, the kernel state with every step, the trace, every stored observation in full and every
 * event. Observations and events are read one piece per pull, so a long run never sits in memory
 * whole; what is exported is the run as of the moment it was asked for.
 */
export function exportRun(input: {
  view: RunView
  state: RunState
  storage: RunStorage
  events: EventLog
  extra?: Record<string, unknown>
  now: number
}): ReadableStream<Uint8Array> {
  const parts = documentParts(input)
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      const next = parts.next()
      if (next.done) controller.close()
      else controller.enqueue(encoder.encode(next.value))
    },
  })
}

function* documentParts(input: Parameters<typeof exportRun>[0]): Generator<string> {
  const { view, state, storage, events } = input
  const handles = storage.observationHandles()
  const lastSeq = events.lastSeq()
  const head = {
    format: EXPORT_FORMAT,
    version: EXPORT_VERSION,
    exportedAt: new Date(input.now).toISOString(),
    run: view,
    ...input.extra,
    state,
    trace: toApiResult(state),
  }
  yield `${JSON.stringify(head).slice(0, -1)},"observations":[`
  let first = true
  for (const handle of handles) {
    const text = storage.getObservation(handle)
    if (text === undefined) continue
    yield `${first ? '' : ','}${JSON.stringify({ handle, text })}`
    first = false
  }
  yield '],"events":['
  for (let after = 0; after < lastSeq;) {
    const page = events.after(after, EVENT_PAGE).filter((e) => e.seq <= lastSeq)
    if (!page.length) break
    yield `${after ? ',' : ''}${page.map((e) => JSON.stringify(e)).join(',')}`
    after = page.at(-1)!.seq
  }
  yield ']}'
}
