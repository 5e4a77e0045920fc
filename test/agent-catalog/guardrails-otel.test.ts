/**
 * Guardrail verdicts in the exported OpenTelemetry trace (docs/guardrails.md#the-trace): each is
 * an `edgeloop.guardrail` event on the run's `invoke_agent` span, and the span names the
 * guardrail that stopped the run.
 */
import { env } from 'cloudflare:workers'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { reply } from '../fakes/fake-openai'
import { FAKE_OTLP_HOST, FakeOtlp } from '../fakes/fake-otlp'
import { drainAlarms, startRun, useServiceFakes } from '../service/harness'

let otlp: FakeOtlp
beforeEach(() => {
  otlp = new FakeOtlp()
})
const fakes = useServiceFakes({ hosts: () => ({ [FAKE_OTLP_HOST]: (req) => otlp.handler(req) }) })
const vars = env as unknown as Record<string, string | undefined>
beforeEach(() => {
  vars.OTEL_EXPORTER_OTLP_ENDPOINT = 'https://otlp.test'
})
afterEach(() => {
  delete vars.OTEL_EXPORTER_OTLP_ENDPOINT
})

describe('guardrails in the exported trace', () => {
  it('every verdict is an event of the run span; the span names the tripwire', async () => {
    fakes.ai.enqueue(reply.text('The FORBIDDEN plan.'))
    const id = await startRun({ task: 'Name the plan of jane@example.com', agent: 'guarded' })
    await drainAlarms(id)
    expect(otlp.violations).toEqual([])
    const [root] = otlp.accepted().filter((s) => s.name === 'invoke_agent guarded')
    expect(root!.attributes).toMatchObject({
      'edgeloop.run.stop_reason': 'guardrail',
      'edgeloop.run.guardrail': 'no_forbidden',
    })
    const verdicts = root!.events.filter((e) => e.name === 'edgeloop.guardrail')
    expect(verdicts.map((e) => e.attributes)).toEqual([
      {
        'edgeloop.guardrail.name': 'no_drop',
        'edgeloop.guardrail.point': 'input',
        'edgeloop.guardrail.verdict': 'pass',
      },
      {
        'edgeloop.guardrail.name': 'pii',
        'edgeloop.guardrail.point': 'input',
        'edgeloop.guardrail.verdict': 'rewrite',
        'edgeloop.guardrail.reason': 'personal data redacted',
      },
      {
        'edgeloop.guardrail.name': 'broken',
        'edgeloop.guardrail.point': 'input',
        'edgeloop.guardrail.verdict': 'pass',
      },
      {
        'edgeloop.guardrail.name': 'lenient',
        'edgeloop.guardrail.point': 'input',
        'edgeloop.guardrail.verdict': 'pass',
      },
      {
        'edgeloop.guardrail.name': 'secrets',
        'edgeloop.guardrail.point': 'output',
        'edgeloop.guardrail.verdict': 'pass',
        'edgeloop.step': 0,
      },
      {
        'edgeloop.guardrail.name': 'pii',
        'edgeloop.guardrail.point': 'output',
        'edgeloop.guardrail.verdict': 'pass',
        'edgeloop.step': 0,
      },
      {
        'edgeloop.guardrail.name': 'no_forbidden',
        'edgeloop.guardrail.point': 'output',
        'edgeloop.guardrail.verdict': 'tripwire',
        'edgeloop.guardrail.reason': 'the answer names a forbidden word',
        'edgeloop.step': 0,
      },
    ])
  })
})
