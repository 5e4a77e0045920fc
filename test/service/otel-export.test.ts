/** Runs exported as OpenTelemetry traces (OTLP/HTTP JSON) to a fake collector, through fetch. */
import { env } from 'cloudflare:workers'
import { runInDurableObject } from 'cloudflare:test'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { otelConfigFromEnv } from '../../src/config/otel'
import { redact, registerSecrets } from '../../src/security/redact'
import { reply } from '../fakes/fake-openai'
import { FAKE_OTLP_HOST, FakeOtlp, type DecodedSpan } from '../fakes/fake-otlp'
import {
  api,
  decide,
  drainAlarms,
  getRun,
  postJson,
  receiverPost,
  startAwaitingApproval,
  startRun,
  stubOf,
  useServiceFakes,
  AUTH,
} from './harness'

let otlp: FakeOtlp
beforeEach(() => {
  otlp = new FakeOtlp()
})
const fakes = useServiceFakes({ hosts: () => ({ [FAKE_OTLP_HOST]: (req) => otlp.handler(req) }) })

const vars = env as unknown as Record<string, string | undefined>
const SETTINGS = {
  OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otlp.test',
  OTEL_EXPORTER_OTLP_HEADERS: 'x-honeycomb-team=hc-secret-key-0123,x-honeycomb-dataset=runs%20prod',
}
beforeEach(() => Object.assign(vars, SETTINGS))
afterEach(() => {
  for (const name of [...Object.keys(SETTINGS), 'OTEL_CAPTURE_CONTENT']) delete vars[name]
})

const TICKET = { severity: 'sev1', component: 'checkout', summary: 'Checkout fails for everyone.' }
const byName = (spans: DecodedSpan[], name: string) => spans.filter((s) => s.name === name)

/** A run that asks to post, is approved, and answers: two steps, one tool call, two slices. */
async function approvedRun(): Promise<string> {
  fakes.ai.enqueue(
    reply.toolCalls([receiverPost('/t')], { content: 'Post it.' }),
    reply.text('Posted.'),
  )
  const { id, argsHash } = await startAwaitingApproval()
  fakes.clock.advance(5_000)
  const res = await decide(id, 'call_post', { decision: 'approve', args_hash: argsHash })
  expect(res.status).toBe(200)
  await drainAlarms(id)
  expect((await getRun(id)).status).toBe('succeeded')
  return id
}

describe('trace export', () => {
  it('one trace per run: invoke_agent, a chat span per model call, execute_tool, the approval wait', async () => {
    const id = await approvedRun()
    expect(otlp.violations).toEqual([])
    // One request per batch, each accepted once.
    expect(otlp.requests.map((r) => `${r.batch} ${r.status}`).sort()).toEqual([
      `${id}:run 200`,
      `${id}:step:0 200`,
      `${id}:step:1 200`,
    ])
    const request = otlp.requests[0]!
    expect(request.headers.get('x-honeycomb-team')).toBe('hc-secret-key-0123')
    expect(request.headers.get('x-honeycomb-dataset')).toBe('runs prod')
    expect(request.resource['service.name']).toBe('edgeloop')

    const spans = otlp.accepted()
    expect(new Set(spans.map((s) => s.traceId))).toEqual(new Set([id.slice(4)]))
    const [root] = byName(spans, 'invoke_agent default')
    expect(root!.parentSpanId).toBeUndefined()
    expect(root!.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'default',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'gpt-test',
      'gen_ai.conversation.id': id,
      'edgeloop.run.id': id,
      'edgeloop.run.stop_reason': 'finish',
      'edgeloop.run.steps': 2,
    })
    expect(root!.status.code).toBe(0)
    // Two slices: before the approval, and the resume after it.
    expect(root!.events.map((e) => e.name)).toEqual(['edgeloop.slice', 'edgeloop.slice.resumed'])

    const chats = byName(spans, 'chat gpt-test')
    expect(chats).toHaveLength(2)
    for (const chat of chats) {
      expect(chat.parentSpanId).toBe(root!.spanId)
      expect(chat.kind).toBe(3)
      expect(chat.attributes['gen_ai.operation.name']).toBe('chat')
      expect(chat.attributes['gen_ai.provider.name']).toBe('openai')
      // What the provider said of its answer: the model that gave it and the response's id.
      expect(chat.attributes['gen_ai.response.model']).toBe('gpt-test')
      expect(chat.attributes['gen_ai.response.id']).toMatch(/^chatcmpl-fake-\d+$/)
      expect(chat.attributes['gen_ai.usage.input_tokens']).toBeGreaterThan(0)
      expect(typeof chat.attributes['gen_ai.usage.output_tokens']).toBe('number')
    }
    expect(new Set(chats.map((c) => c.attributes['gen_ai.response.id'])).size).toBe(2)
    expect(chats.map((c) => c.attributes['gen_ai.response.finish_reasons'])).toEqual([
      ['tool_calls'],
      ['stop'],
    ])
    const [tool] = byName(spans, 'execute_tool http_post')
    expect(tool!.parentSpanId).toBe(root!.spanId)
    expect(tool!.attributes).toMatchObject({
      'gen_ai.tool.name': 'http_post',
      'gen_ai.tool.call.id': 'call_post',
      'edgeloop.tool.outcome': 'ok',
    })
    const [wait] = byName(spans, 'await_approval http_post')
    expect(wait!.attributes).toMatchObject({
      'gen_ai.tool.call.id': 'call_post',
      'edgeloop.approval.decision': 'approved',
      'edgeloop.approval.decided_by': 'api',
    })
    expect(wait!.end - wait!.start).toBe(5_000_000_000n)
    // Content is off by default: no prompt, completion, arguments or result.
    const keys = spans.flatMap((s) => Object.keys(s.attributes))
    expect(keys.filter((k) => /messages|arguments|result/.test(k))).toEqual([])
    // Unique span ids, every parent in the trace.
    const ids = new Set(spans.map((s) => s.spanId))
    expect(ids.size).toBe(spans.length)
    for (const s of spans) if (s.parentSpanId) expect(ids).toContain(s.parentSpanId)
  })

  it('a collector that is down never holds the run; the batch is retried with the same spans', async () => {
    otlp.answer(503, 503)
    fakes.ai.enqueue(reply.text('Done.'))
    const id = await startRun({ task: 'Answer', tools: ['calculator'] })
    await drainAlarms(id)
    expect((await getRun(id)).status).toBe('succeeded')
    expect(otlp.requests.map((r) => r.status)).toEqual([503, 503])
    const pending = await runInDurableObject(stubOf(id), (_i, state) =>
      state.storage.sql
        .exec<{ id: string; status: string }>(
          `SELECT id, status FROM outbox WHERE kind = 'otel' ORDER BY id`,
        )
        .toArray(),
    )
    expect(pending).toEqual([
      { id: 'otel:run', status: 'pending' },
      { id: 'otel:step:0', status: 'pending' },
    ])
    fakes.clock.advance(10 * 60_000)
    await drainAlarms(id)
    const sent = otlp.requests.map((r) => [r.batch, r.status])
    expect(
      sent
        .filter(([, s]) => s === 200)
        .map(([b]) => b)
        .sort(),
    ).toEqual([`${id}:run`, `${id}:step:0`])
    // The retried batch is the same batch: the same span ids as the refused one.
    const ofBatch = (status: number, batch: string) =>
      otlp.requests
        .find((r) => r.status === status && r.batch === batch)!
        .spans.map((s) => s.spanId)
    const refused = otlp.requests[0]!.batch!
    expect(ofBatch(200, refused)).toEqual(ofBatch(503, refused))
    expect(otlp.violations).toEqual([])
  })

  it('a delegated child run is in its parent trace, under the execute_tool span that asked', async () => {
    fakes.ai.enqueue(
      reply.toolCalls([{ id: 'call_t', name: 'ask_triage', arguments: { task: 'Triage it' } }]),
    )
    const parent = await startRun({ agent: 'lead', task: 'Checkout is down, triage it' })
    await drainAlarms(parent)
    const child = (await getRun(parent)).children[0]!.runId
    fakes.ai.enqueue(reply.toolCalls([{ name: 'final_answer', arguments: { answer: TICKET } }]))
    await drainAlarms(child)
    fakes.ai.enqueue(reply.text('Triaged.'))
    await drainAlarms(parent)
    expect((await getRun(parent)).status).toBe('succeeded')
    expect(otlp.violations).toEqual([])

    const spans = otlp.accepted()
    // One trace: the parent's, whatever run a span is of.
    expect(new Set(spans.map((s) => s.traceId))).toEqual(new Set([parent.slice(4)]))
    const [lead] = byName(spans, 'invoke_agent lead')
    const [triage] = byName(spans, 'invoke_agent triage')
    const [ask] = byName(spans, 'execute_tool ask_triage')
    expect(lead!.parentSpanId).toBeUndefined()
    expect(ask!.parentSpanId).toBe(lead!.spanId)
    expect(ask!.attributes['edgeloop.child_run.id']).toBe(child)
    expect(triage!.parentSpanId).toBe(ask!.spanId)
    expect(triage!.attributes['edgeloop.run.id']).toBe(child)
    // The child's own spans hang from its root, and no id of one run is another's.
    const childChats = spans.filter(
      (s) => s.name.startsWith('chat ') && s.parentSpanId === triage!.spanId,
    )
    expect(childChats).toHaveLength(1)
    const ids = new Set(spans.map((s) => s.spanId))
    expect(ids.size).toBe(spans.length)
    for (const s of spans) if (s.parentSpanId) expect(ids).toContain(s.parentSpanId)
  })

  it('joins the caller trace given as traceparent on POST /v1/runs', async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736'
    // Two runs started in one caller span: both join it, and their span ids never collide.
    for (const task of ['Answer', 'Answer again']) {
      fakes.ai.enqueue(reply.text('Done.'))
      const res = await postJson(
        '/v1/runs',
        { task, tools: ['calculator'] },
        { traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
      )
      const { id } = (await res.json()) as { id: string }
      await drainAlarms(id)
    }
    const spans = otlp.accepted()
    expect(new Set(spans.map((s) => s.traceId))).toEqual(new Set([traceId]))
    const roots = byName(spans, 'invoke_agent default')
    expect(roots.map((r) => r.parentSpanId)).toEqual(['00f067aa0ba902b7', '00f067aa0ba902b7'])
    expect(new Set(spans.map((s) => s.spanId)).size).toBe(spans.length)
  })

  it('an invalid traceparent is ignored: the run has a trace of its own', async () => {
    fakes.ai.enqueue(reply.text('Done.'))
    const res = await postJson('/v1/runs', { task: 'Answer' }, { traceparent: '00-zz-11-01' })
    expect(res.status).toBe(202)
    const { id } = (await res.json()) as { id: string }
    await drainAlarms(id)
    expect(new Set(otlp.accepted().map((s) => s.traceId))).toEqual(new Set([id.slice(4)]))
  })

  it('OTEL_CAPTURE_CONTENT=true includes prompts, completions and tool data, redacted', async () => {
    vars.OTEL_CAPTURE_CONTENT = 'true'
    fakes.ai.enqueue(
      reply.toolCalls([{ id: 'call_calc', name: 'calculator', arguments: { expression: '6*7' } }]),
      reply.text('It is 42.'),
    )
    const id = await startRun({
      task: 'Compute 6*7; my key is sk-test-fake-openai-0123456789',
      tools: ['calculator'],
    })
    await drainAlarms(id)
    const spans = otlp.accepted()
    const root = byName(spans, 'invoke_agent default')[0]!
    const input = String(root.attributes['gen_ai.input.messages'])
    expect(JSON.parse(input)).toEqual([
      { role: 'user', parts: [{ type: 'text', content: 'Compute 6*7; my key is [redacted]' }] },
    ])
    expect(JSON.parse(String(root.attributes['gen_ai.output.messages']))[0].parts[0].content).toBe(
      'It is 42.',
    )
    const tool = byName(spans, 'execute_tool calculator')[0]!
    expect(JSON.parse(String(tool.attributes['gen_ai.tool.call.arguments']))).toEqual({
      expression: '6*7',
    })
    expect(String(tool.attributes['gen_ai.tool.call.result'])).toContain('42')
    const text = JSON.stringify(spans, (_k, v) => (typeof v === 'bigint' ? String(v) : v))
    expect(text).not.toContain('sk-test-fake-openai')
    expect(otlp.violations).toEqual([])
  })

  it('nothing is exported, and nothing queued, without an endpoint', async () => {
    delete vars.OTEL_EXPORTER_OTLP_ENDPOINT
    fakes.ai.enqueue(reply.text('Done.'))
    const id = await startRun({ task: 'Answer', tools: ['calculator'] })
    await drainAlarms(id)
    expect(otlp.requests).toEqual([])
    const queued = await runInDurableObject(stubOf(id), (_i, state) =>
      state.storage.sql.exec(`SELECT id FROM outbox WHERE kind = 'otel'`).toArray(),
    )
    expect(queued).toEqual([])
  })

  it('a bad setting is named by readiness, never quoting the headers, and exports nothing', async () => {
    vars.OTEL_EXPORTER_OTLP_HEADERS = 'hc-secret-key-0123-without-a-key'
    const res = await api('/readyz', { headers: AUTH })
    const text = await res.text()
    expect(res.status).toBe(503)
    expect(text).toContain('OTEL_EXPORTER_OTLP_HEADERS must be comma-separated key=value pairs')
    expect(text).not.toContain('hc-secret-key')
    vars.OTEL_EXPORTER_OTLP_HEADERS = SETTINGS.OTEL_EXPORTER_OTLP_HEADERS
    vars.OTEL_EXPORTER_OTLP_ENDPOINT = 'ftp://otlp.test'
    const bad = (await (await api('/readyz', { headers: AUTH })).json()) as {
      error: { details: { problems: { variable: string }[] } }
    }
    expect(bad.error.details.problems.map((p) => p.variable)).toContain(
      'OTEL_EXPORTER_OTLP_ENDPOINT',
    )
    fakes.ai.enqueue(reply.text('Done.'))
    const id = await startRun({ task: 'Answer', tools: ['calculator'] })
    await drainAlarms(id)
    expect(otlp.requests).toEqual([])
  })

  it('the header values are secrets: redacted wherever they would be logged', () => {
    registerSecrets({ ...SETTINGS })
    expect(redact('got hc-secret-key-0123 and runs%20prod and runs prod')).toBe(
      'got [redacted] and [redacted] and [redacted]',
    )
  })
})

describe('the traces URL from OTEL_EXPORTER_OTLP_ENDPOINT', () => {
  it.each([
    ['https://collector.test', 'https://collector.test/v1/traces'],
    ['https://collector.test/', 'https://collector.test/v1/traces'],
    ['https://collector.test/otlp/', 'https://collector.test/otlp/v1/traces'],
    ['https://collector.test/x?key=K', 'https://collector.test/x/v1/traces?key=K'],
    ['https://collector.test/x/?key=K&b=2', 'https://collector.test/x/v1/traces?key=K&b=2'],
  ])('%s → %s (the query stays the query)', (base, url) => {
    expect(otelConfigFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: base })?.tracesUrl).toBe(url)
  })
})
