/**
 * The OTLP/HTTP JSON encoding of spans (the protobuf JSON mapping OTLP specifies): ids as lower
 * case hex, times as unix nanoseconds in decimal strings, 64-bit integers as strings, every
 * attribute value an object naming its type. Written here because an SDK would weigh more than
 * the whole exporter.
 */

export type AttributeValue = string | number | boolean | string[] | undefined | null

/** Span kinds as OTLP numbers them. */
export const SPAN_KIND = { internal: 1, client: 3 } as const

export interface SpanInput {
  traceId: string
  spanId: string
  parentSpanId?: string
  name: string
  kind: number
  startMs: number
  endMs: number
  attributes: Record<string, AttributeValue>
  events?: { name: string; atMs: number; attributes?: Record<string, AttributeValue> }[]
  /** Set for a span that failed: OTLP status code 2 (error) with this message. */
  error?: string
}

/** One export request: the service's resource and its spans under the edgeloop scope. */
export function otlpTraceRequest(
  resource: Record<string, AttributeValue>,
  spans: SpanInput[],
  scopeVersion: string,
): unknown {
  return {
    resourceSpans: [
      {
        resource: { attributes: attributes(resource) },
        scopeSpans: [
          { scope: { name: 'edgeloop', version: scopeVersion }, spans: spans.map(span) },
        ],
      },
    ],
  }
}

function span(s: SpanInput) {
  const end = Math.max(s.startMs, s.endMs)
  return {
    traceId: s.traceId,
    spanId: s.spanId,
    ...(s.parentSpanId ? { parentSpanId: s.parentSpanId } : {}),
    name: s.name,
    kind: s.kind,
    startTimeUnixNano: nanos(s.startMs),
    endTimeUnixNano: nanos(end),
    attributes: attributes(s.attributes),
    events: (s.events ?? []).map((e) => ({
      timeUnixNano: nanos(e.atMs),
      name: e.name,
      attributes: attributes(e.attributes ?? {}),
    })),
    status: s.error ? { code: 2, message: s.error } : { code: 0 },
  }
}

/** Milliseconds since the epoch as nanoseconds, in a string (exact: no float on the way). */
function nanos(ms: number): string {
  const whole = Math.max(0, Math.round(ms * 1000))
  return whole === 0 ? '0' : `${whole}000`
}

function attributes(values: Record<string, AttributeValue>) {
  const out: { key: string; value: Record<string, unknown> }[] = []
  for (const [key, value] of Object.entries(values)) {
    if (value === undefined || value === null) continue
    out.push({ key, value: anyValue(value) })
  }
  return out
}

function anyValue(value: string | number | boolean | string[]): Record<string, unknown> {
  if (Array.isArray(value))
    return { arrayValue: { values: value.map((v) => ({ stringValue: v })) } }
  if (typeof value === 'boolean') return { boolValue: value }
  if (typeof value === 'number') {
    return Number.isInteger(value) ? { intValue: String(value) } : { doubleValue: value }
  }
  return { stringValue: value }
}
