import { otelOrNone } from '../../config/otel'
import { DeliveryError } from '../../errors/delivery-error'
import { fetchFailureText } from '../../errors/runtime-reference'
import type { RunState } from '../../kernel/state'
import type { DeliveryContext } from '../outbox/delivery-context'
import { batchSpans } from './otel-spans'
import { otlpTraceRequest } from './otlp-json'
import type { Outbox } from '../outbox/outbox'
import type { TraceSent } from '../outbox/outbox-kinds'

/** Outbox entries of trace batches: `otel:step:<i>` and `otel:run`. */
export const OTEL_KIND = 'otel'
export const OTLP_TIMEOUT_MS = 10_000
const SCOPE_VERSION = '0.1.0'

/**
 * Queues the trace batches a saved transition completes (inside its transaction, like every
 * delivery): a step's batch once the next step has begun or the run is done, the run's own span
 * when it is done. Entry ids are the batch ids, so queueing again changes nothing.
 */
export function queueTraceBatches(
  outbox: Outbox,
  prev: RunState | undefined,
  next: RunState,
  now: number,
): void {
  const done = next.phase === 'done' && prev?.phase !== 'done'
  const begun = next.steps.length > (prev?.steps.length ?? 0)
  if (!done && !begun) return
  const finished = done ? next.steps.length - 1 : next.steps.length - 2
  for (let i = Math.max(0, (prev?.steps.length ?? 1) - 1); i <= finished; i++) {
    outbox.enqueue(`otel:step:${i}`, OTEL_KIND, {}, now)
  }
  if (done) outbox.enqueue('otel:run', OTEL_KIND, {}, now)
}

/**
 * POSTs one batch as OTLP/HTTP JSON to the configured collector. Retryable: no answer, 429,
 * 502–504 (after `Retry-After`); any other 4xx or 5xx is the collector refusing the data, which
 * a resend would not change.
 */
export async function deliverOtel(entry: { id: string }, ctx: DeliveryContext): Promise<TraceSent> {
  const config = otelOrNone(ctx.env)
  if (!config) {
    throw new DeliveryError('no OTEL_EXPORTER_OTLP_ENDPOINT is configured (any more)', {
      retryable: false,
    })
  }
  const batch = entry.id.slice(`${OTEL_KIND}:`.length)
  const spans = batchSpans(batch, {
    state: ctx.state,
    info: ctx.info,
    events: ctx.events,
    slices: ctx.slices ?? [],
    config,
    defaultModel: ctx.env.MODEL,
  })
  if (!spans.length) return { spans: 0 }
  const resource = { 'service.name': config.serviceName, 'telemetry.sdk.name': 'edgeloop' }
  const body = JSON.stringify(otlpTraceRequest(resource, spans, SCOPE_VERSION))
  const host = new URL(config.tracesUrl).host
  let res: Response
  try {
    res = await fetch(config.tracesUrl, {
      method: 'POST',
      headers: {
        ...config.headers,
        'Content-Type': 'application/json',
        'User-Agent': 'edgeloop-otlp/1',
        // The same batch always has this id and the same span ids: a resend is a duplicate.
        'X-Edgeloop-Batch': `${ctx.state.id}:${batch}`,
      },
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(OTLP_TIMEOUT_MS),
    })
  } catch (err) {
    throw new DeliveryError(
      `trace export to ${host} failed: ${fetchFailureText((err as Error).message)}`,
      {
        cause: err,
      },
    )
  }
  const text = await res.text()
  if (res.ok) return { status: res.status, spans: spans.length, ...partialSuccess(text) }
  const retryable = res.status === 429 || (res.status >= 502 && res.status <= 504)
  const retryAfter = Number(res.headers.get('Retry-After'))
  throw new DeliveryError(`trace export to ${host} answered HTTP ${res.status}`, {
    retryable,
    retryAfterMs: Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter * 1000 : undefined,
  })
}

/** What a collector that kept only part of a batch says (OTLP `partialSuccess`). */
function partialSuccess(text: string): { rejectedSpans?: number } {
  try {
    const rejected = (JSON.parse(text) as { partialSuccess?: { rejectedSpans?: string | number } })
      .partialSuccess?.rejectedSpans
    return rejected ? { rejectedSpans: Number(rejected) } : {}
  } catch {
    return {}
  }
}
