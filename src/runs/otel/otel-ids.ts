import type { RunTrace } from '../types'

/**
 * A run's trace and span ids (docs/operations.md#exporting-traces). A run's trace id is the
 * caller's (`traceparent` on POST /v1/runs), its parent run's (a delegated child), or made from
 * the run id, and kept in the run's info row; every span id is a hash of the trace id, the run id
 * when the trace is shared, and what the span is (the run, a step's model call, a tool call), so
 * a batch sent again after a crash carries the same ids, never new ones.
 */

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/
const ZEROS = /^0+$/

/** A W3C `traceparent` (version 00) → the trace it names; undefined when it is not valid. */
export function parseTraceparent(header: string | undefined): RunTrace | undefined {
  const match = TRACEPARENT.exec(header?.trim().toLowerCase() ?? '')
  // The Trace Context spec: an all-zero trace or parent id is invalid, and is ignored.
  if (!match || ZEROS.test(match[1]!) || ZEROS.test(match[2]!)) return undefined
  return sharedTrace(match[1]!, match[2]!)
}

/** The run's trace: the one it recorded, else one made from its id (runs from before tracing). */
export function traceOf(runId: string, recorded: RunTrace | undefined): RunTrace {
  if (recorded) return recorded
  // Run ids are `run_` and 32 random or hashed hex digits: already a good trace id.
  const hex = /^run_([0-9a-f]{32})$/.exec(runId)?.[1]
  return { traceId: hex ?? `${fnv64(`trace:${runId}`)}${fnv64(`trace2:${runId}`)}` }
}

/** A trace a run joins (a caller's, its parent's): its spans' ids are made from the run id too. */
export function sharedTrace(traceId: string, parentSpanId: string): RunTrace {
  return { traceId, parentSpanId, shared: true }
}

/** What a tool call's span is named by in its run (`spanIdOf`). */
export function toolSpanKey(callId: string): string {
  return `tool:${callId}`
}

/**
 * The trace of the child run that call `callId` of a run starts: the parent's, its root span a
 * child of that call's `execute_tool` span (docs/operations.md#exporting-traces).
 */
export function childTrace(
  parentId: string,
  parent: RunTrace | undefined,
  callId: string,
): RunTrace {
  const trace = traceOf(parentId, parent)
  return sharedTrace(trace.traceId, spanIdOf(parentId, trace, toolSpanKey(callId)))
}

/** The span id of `what` (`run`, `chat:3`, `tool:call_1` …) of run `runId` in its trace. */
export function spanIdOf(runId: string, trace: RunTrace, what: string): string {
  const id = fnv64(trace.shared ? `${trace.traceId}:${runId}:${what}` : `${trace.traceId}:${what}`)
  return ZEROS.test(id) ? '0000000000000001' : id
}

const PRIME = 0x100000001b3n
const MASK = (1n << 64n) - 1n

/** FNV-1a, 64 bits, as 16 hex digits: ids unique within a trace, the same on every replay. */
function fnv64(text: string): string {
  let hash = 0xcbf29ce484222325n
  for (const byte of new TextEncoder().encode(text)) {
    hash = ((hash ^ BigInt(byte)) * PRIME) & MASK
  }
  return hash.toString(16).padStart(16, '0')
}
