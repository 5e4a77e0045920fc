/**
 * A deployment whose OPENAI_BASE_URL names a host that does not resolve (`model.invalid`, RFC 2606:
 * never resolvable). The model calls leave through workerd's own fetch, which fails its DNS
 * lookup; the run ends `model_error` with a message naming the host and where the cause is, its
 * callback and its trace are delivered, and no promise is left rejected with nobody handling it.
 * A callback receiver and a trace collector that do not resolve fail their deliveries the same
 * way, each retried later.
 *
 * workerd itself prints each failed lookup (`failed to lookup address information`) under the
 * reference the error names: expected in this project's output. Run verbose (the pool's default,
 * off for this project), it adds `uncaught exception; source = Uncaught (in promise)` for the
 * same rejection although the Worker handles it (docs/operations.md#an-unreachable-host).
 */
import { env } from 'cloudflare:workers'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { FAKE_OTLP_HOST, FakeOtlp } from '../fakes/fake-otlp'
import { drainAlarms, getRun, RECEIVER, startRun, useServiceFakes } from '../service/harness'

const MODEL_HOST = 'model.invalid'
// A run's callback receiver and a trace collector that do not resolve either.
const HOOKS_HOST = 'hooks.invalid'
const OTLP_HOST = 'otlp.invalid'
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
    [HOOKS_HOST]: (req) => workerdFetch(req),
    [OTLP_HOST]: (req) => workerdFetch(req),
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

  it('nor its callback receiver and trace collector: each delivery fails on its own and waits for its retry, nothing unhandled', async () => {
    vars.OTEL_EXPORTER_OTLP_ENDPOINT = `https://${OTLP_HOST}`
    const id = await startRun({
      task: 'Summarise the incident',
      callback_url: `https://${HOOKS_HOST}/edgeloop`,
    })
    await drainAlarms(id)

    const view = await getRun(id)
    expect(view.result).toMatchObject({ ok: false, stopReason: 'model_error' })
    // Each failed once, says where and where the cause is, and waits for its retry.
    const hint = (host: string) =>
      new RegExp(
        `^${host} failed: internal error; reference = (\\w+) \\(workerd logged the cause ` +
          'under wdErrId = \\1, such as a host name that does not resolve\\)$',
      )
    expect(view.deliveries).toEqual([
      expect.objectContaining({ id: 'callback', status: 'pending', attempts: 1 }),
      expect.objectContaining({ id: 'otel:run', status: 'pending', attempts: 1 }),
    ])
    expect(view.deliveries[0]!.lastError).toMatch(hint(`callback to ${HOOKS_HOST}`))
    expect(view.deliveries[1]!.lastError).toMatch(hint(`trace export to ${OTLP_HOST}`))
    expect(fakes.outbound.requests.map((r) => `${r.method} ${r.url}`)).toEqual([
      `POST https://${MODEL_HOST}/v1/chat/completions`,
      `POST https://${MODEL_HOST}/v1/chat/completions`,
      `POST https://${HOOKS_HOST}/edgeloop`,
      `POST https://${OTLP_HOST}/v1/traces`,
    ])
    expect(unhandled).toEqual([])
  })
})
