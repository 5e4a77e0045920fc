/**
 * A deployment whose OPENAI_BASE_URL names a host that does not resolve (`model.invalid`, RFC 2606:
 * never resolvable). The model calls leave through workerd's own fetch, which fails its DNS
 * lookup; the run ends `model_error` with a message naming the host and where the cause is, its
 * callback and its trace are delivered, and no promise is left rejected with nobody handling it.
 *
 * workerd itself logs each failed lookup (`failed to lookup address information`) under the
 * reference the run's error names, and, run verbose as here, `uncaught exception; source =
 * Uncaught (in promise)` beside it although the rejection is handled: its own lines, not the
 * Worker's (docs/operations.md#an-unreachable-model-host).
 */
import { env } from 'cloudflare:workers'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { FAKE_OTLP_HOST, FakeOtlp } from '../fakes/fake-otlp'
import { drainAlarms, getRun, RECEIVER, startRun, useServiceFakes } from '../service/harness'

const MODEL_HOST = 'model.invalid'
// workerd's own fetch, taken before a test's strict outbound fake replaces it: the model's host
// is the one request let through to the network stack, where its lookup fails.
const workerdFetch = globalThis.fetch

let otlp: FakeOtlp
beforeEach(() => {
  otlp = new FakeOtlp()
})
const fakes = useServiceFakes({
  openai: false,
  hosts: () => ({
    [MODEL_HOST]: (req) => workerdFetch(req),
    [FAKE_OTLP_HOST]: (req) => otlp.handler(req),
  }),
})

// What the isolate (the test, the Worker and its Durable Objects share it) reports as a promise
// rejected with no handler.
const unhandled: unknown[] = []
const onUnhandled = (event: PromiseRejectionEvent) => void unhandled.push(event.reason)
beforeEach(() => {
  unhandled.length = 0
  addEventListener('unhandledrejection', onUnhandled)
})
afterEach(() => removeEventListener('unhandledrejection', onUnhandled))

const vars = env as unknown as Record<string, string | undefined>
beforeEach(() => {
  vars.OTEL_EXPORTER_OTLP_ENDPOINT = `https://${FAKE_OTLP_HOST}`
})
afterEach(() => {
  delete vars.OTEL_EXPORTER_OTLP_ENDPOINT
})

/** The failed-lookup message the run's error carries (MODEL_MAX_RETRIES=1: two attempts). */
const UNRESOLVED = new RegExp(
  `^ModelError: model call to ${MODEL_HOST}/gpt-test failed, after 2 attempts: could not connect: ` +
    'internal error; reference = (\\w+) \\(workerd logged the cause under wdErrId = \\1, such ' +
    'as a host name that does not resolve; check OPENAI_BASE_URL and that the provider is ' +
    'reachable\\)$',
)

describe('a model host that does not resolve', () => {
  it('ends the run model_error naming the host and the cause, its callback and trace delivered, nothing unhandled', async () => {
    const id = await startRun({
      task: 'Summarise the incident',
      callback_url: `https://${RECEIVER}/hooks/edgeloop`,
    })
    await drainAlarms(id)

    const view = await getRun(id)
    expect(view.status).toBe('failed')
    expect(view.result).toMatchObject({ ok: false, answer: '', stopReason: 'model_error' })
    expect(view.result.error).toMatch(UNRESOLVED)
    // Each attempt went out once, to the configured host, through workerd's fetch.
    const sent = fakes.outbound.to(MODEL_HOST)
    expect(sent.map((r) => `${r.method} ${r.url}`)).toEqual([
      `POST https://${MODEL_HOST}/v1/chat/completions`,
      `POST https://${MODEL_HOST}/v1/chat/completions`,
    ])

    // The failure reached the caller and the trace as it is, once.
    expect(fakes.receiver.hits).toHaveLength(1)
    expect(JSON.parse(fakes.receiver.hits[0]!.body)).toMatchObject({
      id,
      ok: false,
      stopReason: 'model_error',
      error: view.result.error,
    })
    expect(otlp.violations).toEqual([])
    // One trace, its root span an error carrying the same message (a call that never answered
    // makes no step, so no chat span).
    const spans = otlp.accepted()
    expect(spans.map((s) => s.name)).toEqual(['invoke_agent default'])
    expect(spans[0]!.status).toEqual({ code: 2, message: view.result.error })

    expect(unhandled).toEqual([])
  })
})
