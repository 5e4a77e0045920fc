/**
 * JSON nested at any depth, 1 to 10,000 levels, on every route that takes JSON: a clear 400 past
 * MAX_JSON_DEPTH, the usual answer below it, never a 500; and tool arguments a model nests that
 * deep become a [ToolError] while the run goes on.
 */
import { describe, expect, it } from 'vitest'
import { MAX_JSON_DEPTH } from '../../src/validation/json-walk'
import { MAX_OUTPUT_SCHEMA_DEPTH } from '../../src/validation/output-schema'
import { MAX_BODY_BYTES } from '../../src/routes/body'
import { react } from '../../src/kernel/react'
import { KernelUsageError } from '../../src/errors/kernel-usage-error'
import { canonicalJson, sameJson } from '../../src/kernel/canonical'
import { reply } from '../fakes/fake-openai'
import { signedSlackRequest } from '../fakes/fake-slack'
import {
  api,
  drainAlarms,
  getTrace,
  JSON_AUTH,
  startAwaitingApproval,
  startRun,
  receiverPost,
  useServiceFakes,
} from '../service/harness'

const fakes = useServiceFakes()

const DEPTHS = [
  1,
  2,
  10,
  MAX_JSON_DEPTH - 1,
  MAX_JSON_DEPTH,
  MAX_JSON_DEPTH + 1,
  100,
  1_000,
  2_000,
  4_000,
  7_500,
  10_000,
]

/** `depth` levels of arrays around a number: `[[[1]]]` is 3. */
function nested(depth: number): string {
  return '['.repeat(depth) + '1' + ']'.repeat(depth)
}

/** An object schema exactly `depth` levels deep: `properties` hold the next one. */
function objectSchema(depth: number): string {
  const levels = Math.floor((depth - 1) / 2)
  const inner = depth - 2 * levels === 2 ? '{"type":"object","properties":{}}' : '{"type":"object"}'
  return '{"type":"object","properties":{"a":'.repeat(levels) + inner + '}}'.repeat(levels)
}

/** The depth of the whole body when `inner` sits one object below its top. */
const bodyDepth = (innerDepth: number) => innerDepth + 1

/** Checks the answer for a body `depth` deep; returns its text. */
async function expectAnswer(res: Response, shallowStatus: number[], depth: number) {
  const body = await res.text()
  expect(res.status, body.slice(0, 300)).not.toBe(500)
  if (depth > MAX_JSON_DEPTH) {
    expect(res.status).toBe(400)
    expect(JSON.parse(body)).toMatchObject({
      error: { code: expect.stringMatching(/too_deep|invalid_slack_payload/) },
    })
  } else {
    expect(shallowStatus, body.slice(0, 300)).toContain(res.status)
  }
  return body
}

describe.each(DEPTHS)('JSON nested %i levels deep', (depth) => {
  it('POST /v1/runs with it as metadata', async () => {
    if (depth <= MAX_JSON_DEPTH) fakes.ai.enqueue(reply.text('Done.'))
    const res = await api('/v1/runs', {
      method: 'POST',
      headers: JSON_AUTH,
      body: `{"task":"Deep","tools":[],"metadata":{"m":${nested(Math.max(0, depth - 2))}}}`,
    })
    const body = await expectAnswer(res, [202], depth)
    if (res.status === 202) {
      const { id } = JSON.parse(body) as { id: string }
      await drainAlarms(id)
    }
  })

  it('POST /v1/runs with it as output_schema', async () => {
    const within = depth <= MAX_OUTPUT_SCHEMA_DEPTH
    if (within) fakes.ai.enqueue(reply.text('{}'))
    const body = `{"task":"Deep schema","tools":[],"output_schema":${objectSchema(depth)}}`
    const res = await api('/v1/runs', { method: 'POST', headers: JSON_AUTH, body })
    if (body.length > MAX_BODY_BYTES) {
      // Deep schemas are long: past the body limit, the size is what is refused.
      expect(res.status).toBe(413)
      expect(await res.json()).toMatchObject({ error: { code: 'body_too_large' } })
      return
    }
    const text = await expectAnswer(res, within ? [202] : [400], bodyDepth(depth))
    if (res.status === 202) await drainAlarms((JSON.parse(text) as { id: string }).id)
    else if (bodyDepth(depth) <= MAX_JSON_DEPTH) {
      // Past the output schema's own bound but within the body's: its own 400, naming the depth.
      expect(JSON.parse(text)).toMatchObject({
        error: {
          code: 'invalid_output_schema',
          message: `output_schema nests more than ${MAX_OUTPUT_SCHEMA_DEPTH} levels deep; at most ${MAX_OUTPUT_SCHEMA_DEPTH}`,
        },
      })
    }
  })

  it('POST /v1/runs continuing a run, with it in the body', async () => {
    const res = await api('/v1/runs', {
      method: 'POST',
      headers: JSON_AUTH,
      body: `{"task":"More","continue":"run_${'0'.repeat(32)}","budget":${nested(Math.max(0, depth - 1))}}`,
    })
    await expectAnswer(res, [400, 404], bodyDepth(Math.max(0, depth - 1)))
  })

  it.each(['approvals/call_x', 'cancel'])('POST /v1/runs/:id/%s', async (route) => {
    const res = await api(`/v1/runs/run_${'0'.repeat(32)}/${route}`, {
      method: 'POST',
      headers: JSON_AUTH,
      body: `{"reason":"r","extra":${nested(Math.max(0, depth - 1))}}`,
    })
    await expectAnswer(res, [400, 404], bodyDepth(Math.max(0, depth - 1)))
  })

  it('POST /slack/events', async () => {
    const body = `{"type":"event_callback","event":${nested(Math.max(0, depth - 1))}}`
    const res = await api(
      '/slack/events',
      await signedSlackRequest({
        url: 'https://edgeloop.test/slack/events',
        secret: 'test-signing-secret',
        body,
        timestamp: Math.floor(Date.now() / 1000),
      }),
    )
    await expectAnswer(res, [200, 400], bodyDepth(Math.max(0, depth - 1)))
  })

  it('POST /slack/interactions (its payload field)', async () => {
    const payload = `{"type":"block_actions","actions":${nested(Math.max(0, depth - 1))}}`
    const res = await api(
      '/slack/interactions',
      await signedSlackRequest({
        url: 'https://edgeloop.test/slack/interactions',
        secret: 'test-signing-secret',
        body: new URLSearchParams({ payload }).toString(),
        timestamp: Math.floor(Date.now() / 1000),
      }),
    )
    await expectAnswer(res, [200, 400], bodyDepth(Math.max(0, depth - 1)))
  })
})

describe('an approval decision on a waiting run, nested deep', () => {
  it.each([10, 65, 10_000])('%i levels: a 400, the approval still pending', async (depth) => {
    fakes.ai.enqueue(reply.toolCalls([receiverPost('/deep', { n: 1 })]))
    const { id, argsHash } = await startAwaitingApproval()
    const res = await api(`/v1/runs/${id}/approvals/call_post`, {
      method: 'POST',
      headers: JSON_AUTH,
      body: `{"decision":"approve","args_hash":"${argsHash}","note":${nested(depth)}}`,
    })
    expect(res.status).toBe(400)
    const { error } = (await res.json()) as { error: { code: string } }
    expect(error.code).toBe(depth + 1 > MAX_JSON_DEPTH ? 'json_too_deep' : 'invalid_request')
  })
})

describe('tool arguments a model nests deep', () => {
  it.each([100, 2_000])(
    '%i levels: a [ToolError] for that call, and the run finishes',
    async (depth) => {
      // The fake model streams in 7-byte writes by default: 2,000 levels of arguments are then
      // some 45,000 reads (seconds in workerd), which is the fake's cost, not the service's.
      fakes.ai.writeBytes = 4_096
      fakes.ai.enqueue(
        reply.toolCalls([
          { id: 'call_deep', name: 'calculator', arguments: `{"expression":${nested(depth)}}` },
        ]),
        reply.text('Gave up on that.'),
      )
      const id = await startRun({ task: 'Deep args', tools: ['calculator'] })
      await drainAlarms(id)
      const trace = await getTrace(id)
      expect(trace.ok).toBe(true)
      const call = trace.steps[0]!.calls[0]!
      expect(call.kind).toBe('tool_error')
      expect(call.observation).toMatch(/deeper than 64 levels/)
    },
  )
})

describe('an output schema given to the kernel at any depth', () => {
  it.each([MAX_OUTPUT_SCHEMA_DEPTH + 1, 1_000, 10_000])(
    '%i levels: react() throws KernelUsageError naming the depth, never a RangeError',
    async (depth) => {
      const output = JSON.parse(
        '{"type":"object","properties":{"a":'.repeat(depth) + '{}' + '}}'.repeat(depth),
      ) as Record<string, unknown>
      const model = { name: 'unused', complete: () => Promise.reject(new Error('not called')) }
      const run = react('x', [], { model, output })
      await expect(run).rejects.toThrow(KernelUsageError)
      await expect(react('x', [], { model, output })).rejects.toThrow(
        `levels deep; at most ${MAX_OUTPUT_SCHEMA_DEPTH}`,
      )
    },
  )
})

describe('canonical hashing at any depth', () => {
  it('canonicalJson and sameJson walk 10,000 levels without recursion', () => {
    const deep = JSON.parse(`{"b":1,"a":${nested(10_000)}}`) as unknown
    const text = canonicalJson(deep)
    expect(text.startsWith('{"a":[[[')).toBe(true)
    expect(text.endsWith(']]],"b":1}')).toBe(true)
    expect(sameJson(deep, JSON.parse(text))).toBe(true)
    expect(sameJson(deep, JSON.parse(`{"a":${nested(9_999)},"b":1}`))).toBe(false)
    expect(canonicalJson({ b: [1, undefined], a: { d: undefined, c: 'x' } })).toBe(
      JSON.stringify({ a: { c: 'x' }, b: [1, null] }),
    )
  })
})
