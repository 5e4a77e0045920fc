/**
 * JSON nested at any depth, 1 to 10,000 levels, on every route that takes JSON: a clear 400 past
 * MAX_JSON_DEPTH, the usual answer below it, never a 500; and tool arguments a model nests that
 * deep become a [ToolError] while the run goes on.
 */
import { describe, expect, it } from 'vitest'
import { MAX_JSON_DEPTH } from '../../src/validation/json-walk'
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
