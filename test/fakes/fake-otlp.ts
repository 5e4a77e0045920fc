/**
 * A fake OpenTelemetry collector: `POST /v1/traces` with OTLP/HTTP JSON. It decodes every request
 * and checks it against the OTLP JSON mapping (hex trace and span ids of the right length, unix
 * nanoseconds as decimal strings, end not before start, every attribute value an AnyValue with
 * exactly one typed field); anything else is a violation the test asserts empty.
 */
import type { FakeHandler } from './outbound'

export const FAKE_OTLP_HOST = 'otlp.test'

export type Primitive = string | number | boolean | Primitive[]

export interface DecodedSpan {
  traceId: string
  spanId: string
  parentSpanId?: string
  name: string
  kind: number
  start: bigint
  end: bigint
  attributes: Record<string, Primitive>
  events: { name: string; time: bigint; attributes: Record<string, Primitive> }[]
  status: { code: number; message?: string }
}

export interface OtlpRequest {
  path: string
  headers: Headers
  /** `X-Edgeloop-Batch`: the run and the batch. */
  batch: string | null
  status: number
  resource: Record<string, Primitive>
  spans: DecodedSpan[]
}

const HEX32 = /^[0-9a-f]{32}$/
const HEX16 = /^[0-9a-f]{16}$/
const NANOS = /^\d+$/

export class FakeOtlp {
  readonly requests: OtlpRequest[] = []
  readonly violations: string[] = []
  #statuses: number[] = []

  /** Answers the next requests with these statuses (then 200). */
  answer(...statuses: number[]): this {
    this.#statuses.push(...statuses)
    return this
  }

  /** Every span the collector accepted (answered 2xx), in order. */
  accepted(): DecodedSpan[] {
    return this.requests.filter((r) => r.status < 300).flatMap((r) => r.spans)
  }

  readonly handler: FakeHandler = async (req) => {
    const path = new URL(req.url).pathname
    const where = `${req.method} ${path}`
    if (req.method !== 'POST' || path !== '/v1/traces') this.violations.push(`${where}: not OTLP`)
    if (!/^application\/json\b/.test(req.headers.get('content-type') ?? '')) {
      this.violations.push(`${where}: content-type ${req.headers.get('content-type')}`)
    }
    let body: unknown
    try {
      body = JSON.parse(await req.text())
    } catch {
      this.violations.push(`${where}: body is not JSON`)
      return new Response('bad json', { status: 400 })
    }
    const status = this.#statuses.shift() ?? 200
    const decoded = this.#decode(body)
    this.requests.push({
      path,
      headers: req.headers,
      batch: req.headers.get('x-edgeloop-batch'),
      status,
      ...decoded,
    })
    return Response.json(status < 300 ? { partialSuccess: {} } : { error: 'unavailable' }, {
      status,
    })
  }

  #decode(body: unknown): { resource: Record<string, Primitive>; spans: DecodedSpan[] } {
    const bad = (what: string) => this.violations.push(what)
    const spans: DecodedSpan[] = []
    let resource: Record<string, Primitive> = {}
    const resourceSpans = (body as { resourceSpans?: unknown }).resourceSpans
    if (!Array.isArray(resourceSpans) || !resourceSpans.length) {
      bad('resourceSpans is not a non-empty array')
      return { resource, spans }
    }
    for (const rs of resourceSpans as Record<string, unknown>[]) {
      resource = this.#attributes((rs.resource as { attributes?: unknown })?.attributes, 'resource')
      if (!Array.isArray(rs.scopeSpans)) bad('scopeSpans is not an array')
      for (const ss of (rs.scopeSpans ?? []) as Record<string, unknown>[]) {
        if (typeof (ss.scope as { name?: unknown })?.name !== 'string') bad('scope.name missing')
        for (const s of (ss.spans ?? []) as Record<string, unknown>[]) spans.push(this.#span(s))
      }
    }
    return { resource, spans }
  }

  #span(s: Record<string, unknown>): DecodedSpan {
    const bad = (what: string) => this.violations.push(`span ${String(s.name)}: ${what}`)
    if (typeof s.traceId !== 'string' || !HEX32.test(s.traceId) || /^0+$/.test(s.traceId))
      bad(`traceId ${String(s.traceId)}`)
    if (typeof s.spanId !== 'string' || !HEX16.test(s.spanId) || /^0+$/.test(s.spanId))
      bad(`spanId ${String(s.spanId)}`)
    if (
      s.parentSpanId !== undefined &&
      (typeof s.parentSpanId !== 'string' || !HEX16.test(s.parentSpanId))
    )
      bad(`parentSpanId ${String(s.parentSpanId)}`)
    if (typeof s.name !== 'string' || !s.name) bad('no name')
    if (!Number.isInteger(s.kind) || (s.kind as number) < 0 || (s.kind as number) > 5)
      bad(`kind ${String(s.kind)}`)
    const time = (v: unknown, what: string): bigint => {
      if (typeof v !== 'string' || !NANOS.test(v)) {
        bad(`${what} ${String(v)} is not unix nanoseconds in a string`)
        return 0n
      }
      return BigInt(v)
    }
    const start = time(s.startTimeUnixNano, 'startTimeUnixNano')
    const end = time(s.endTimeUnixNano, 'endTimeUnixNano')
    if (end < start) bad('ends before it starts')
    const status = (s.status ?? { code: 0 }) as { code: number; message?: string }
    if (![0, 1, 2].includes(status.code)) bad(`status.code ${status.code}`)
    if (!Array.isArray(s.events ?? [])) bad('events is not an array')
    return {
      traceId: s.traceId as string,
      spanId: s.spanId as string,
      ...(s.parentSpanId ? { parentSpanId: s.parentSpanId as string } : {}),
      name: s.name as string,
      kind: s.kind as number,
      start,
      end,
      attributes: this.#attributes(s.attributes, `span ${String(s.name)}`),
      events: ((s.events ?? []) as Record<string, unknown>[]).map((e) => ({
        name: String(e.name),
        time: time(e.timeUnixNano, 'event timeUnixNano'),
        attributes: this.#attributes(e.attributes ?? [], `event ${String(e.name)}`),
      })),
      status,
    }
  }

  #attributes(list: unknown, where: string): Record<string, Primitive> {
    const out: Record<string, Primitive> = {}
    if (!Array.isArray(list)) {
      this.violations.push(`${where}: attributes is not an array`)
      return out
    }
    for (const kv of list as { key?: unknown; value?: unknown }[]) {
      if (typeof kv.key !== 'string') this.violations.push(`${where}: attribute without a key`)
      out[String(kv.key)] = this.#value(kv.value, `${where} ${String(kv.key)}`)
    }
    return out
  }

  #value(value: unknown, where: string): Primitive {
    const keys = value && typeof value === 'object' ? Object.keys(value) : []
    if (keys.length !== 1) {
      this.violations.push(`${where}: value ${JSON.stringify(value)} is not one AnyValue field`)
      return ''
    }
    const v = (value as Record<string, unknown>)[keys[0]!]
    switch (keys[0]) {
      case 'stringValue':
        if (typeof v === 'string') return v
        break
      case 'boolValue':
        if (typeof v === 'boolean') return v
        break
      case 'intValue':
        if (typeof v === 'string' && /^-?\d+$/.test(v)) return Number(v)
        if (typeof v === 'number' && Number.isInteger(v)) return v
        break
      case 'doubleValue':
        if (typeof v === 'number') return v
        break
      case 'arrayValue': {
        const values = (v as { values?: unknown })?.values
        if (Array.isArray(values)) return values.map((x) => this.#value(x, where))
        break
      }
    }
    this.violations.push(`${where}: ${keys[0]} ${JSON.stringify(v)} is not valid`)
    return ''
  }
}
