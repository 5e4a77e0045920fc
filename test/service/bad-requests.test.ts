/**
 * Every route answers bad input with a 4xx JSON `{ error: { code, message } }`
 * (docs/architecture.md#layers), never a 5xx; authentication by bearer token or by a signed webhook body.
 */
import { describe, expect, it } from 'vitest'
import { reply } from '../fakes/fake-openai'
import {
  api,
  AUTH,
  decide,
  drainAlarms,
  getRun,
  JSON_AUTH,
  startRun,
  WEBHOOK_SECRET,
  useServiceFakes,
  hmacHex,
  receiverPost,
  startAwaitingApproval,
} from './harness'

const fakes = useServiceFakes({ receiver: false })

/** A run waiting for approval of `call_post`, one whose `call_post` is decided, one finished. */
interface Runs {
  pending: { id: string; hash: string }
  decided: { id: string; hash: string }
  finished: { id: string; callId: string }
}

async function makeRuns(): Promise<Runs> {
  fakes.ai.enqueue(
    reply.toolCalls([receiverPost()]),
    reply.toolCalls([receiverPost()]),
    reply.toolCalls([{ id: 'call_calc', name: 'calculator', arguments: { expression: '1 + 1' } }]),
    reply.text('Done.'),
  )
  const awaiting = async () => {
    const { id, argsHash } = await startAwaitingApproval()
    return { id, hash: argsHash }
  }
  const pending = await awaiting()
  const decided = await awaiting()
  const res = await decide(decided.id, 'call_post', { decision: 'deny', args_hash: decided.hash })
  expect(res.status).toBe(200)
  const finished = await startRun({ task: 'Answer', tools: ['calculator'] })
  await drainAlarms(finished)
  expect((await getRun(finished)).status).toBe('succeeded')
  return { pending, decided, finished: { id: finished, callId: 'call_calc' } }
}

const UNKNOWN_RUN = `run_${'0'.repeat(32)}`
const HASH = 'a'.repeat(64)

const post = (path: string, body: string, headers: Record<string, string> = JSON_AUTH) =>
  api(path, { method: 'POST', headers, body })
const postRun = (body: unknown, headers: Record<string, string> = {}) =>
  post('/v1/runs', JSON.stringify(body), { ...JSON_AUTH, ...headers })

/** `v1=<hex HMAC-SHA256 of "{timestamp}.{body}">`, computed here independently of src/. */
async function signature(secret: string, timestamp: number, body: string): Promise<string> {
  return `v1=${await hmacHex(secret, `${timestamp}.${body}`)}`
}

async function signedPost(
  body: string,
  options: { ts?: number; secret?: string; signed?: string } = {},
) {
  const ts = options.ts ?? Math.floor(Date.now() / 1000)
  return post('/v1/runs', body, {
    'content-type': 'application/json',
    'X-Edgeloop-Timestamp': String(ts),
    'X-Edgeloop-Signature': await signature(
      options.secret ?? WEBHOOK_SECRET,
      ts,
      options.signed ?? body,
    ),
  })
}

const nested = (depth: number): unknown => {
  let v: unknown = 1
  for (let i = 0; i < depth; i++) v = { a: v }
  return v
}

type Row = [string, (runs: () => Promise<Runs>) => Promise<Response>, number, string]

const table: Row[] = [
  // POST /v1/runs
  ['POST /v1/runs malformed JSON', () => post('/v1/runs', '{"task":'), 400, 'malformed_json'],
  ['POST /v1/runs empty body', () => post('/v1/runs', ''), 400, 'malformed_json'],
  ['POST /v1/runs task of the wrong type', () => postRun({ task: 5 }), 400, 'invalid_request'],
  ['POST /v1/runs body is an array', () => postRun([{ task: 'x' }]), 400, 'invalid_request'],
  ['POST /v1/runs body is null', () => postRun(null), 400, 'invalid_request'],
  ['POST /v1/runs blank task', () => postRun({ task: '   ' }), 400, 'invalid_request'],
  [
    'POST /v1/runs agent that is no agent name (the pattern /openapi.json gives)',
    () => postRun({ task: 'x', agent: 'Ops Team!' }),
    400,
    'invalid_request',
  ],
  [
    'POST /v1/runs unknown field',
    () => postRun({ task: 'x', tool: ['calculator'] }),
    400,
    'invalid_request',
  ],
  [
    'POST /v1/runs unknown budget field',
    () => postRun({ task: 'x', budget: { steps: 3 } }),
    400,
    'invalid_request',
  ],
  [
    'POST /v1/runs fractional maxSteps',
    () => postRun({ task: 'x', budget: { maxSteps: 1.5 } }),
    400,
    'invalid_request',
  ],
  [
    'POST /v1/runs protocol not offered',
    () => postRun({ task: 'x', protocol: 'xml' }),
    400,
    'invalid_request',
  ],
  [
    'POST /v1/runs oversized body',
    () => postRun({ task: 'x'.repeat(70_000) }),
    413,
    'body_too_large',
  ],
  [
    'POST /v1/runs wrong content type',
    () =>
      post('/v1/runs', JSON.stringify({ task: 'x' }), { ...AUTH, 'content-type': 'text/plain' }),
    415,
    'unsupported_media_type',
  ],
  [
    'POST /v1/runs invalid UTF-8',
    () =>
      api('/v1/runs', {
        method: 'POST',
        headers: JSON_AUTH,
        body: new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]),
      }),
    400,
    'invalid_encoding',
  ],
  [
    'POST /v1/runs unknown tool in the subset',
    () => postRun({ task: 'x', tools: ['calculator', 'shell'] }),
    400,
    'unknown_tools',
  ],
  [
    'POST /v1/runs budget above the maxima',
    () => postRun({ task: 'x', budget: { maxSteps: 51 } }),
    400,
    'budget_over_maximum',
  ],
  [
    'POST /v1/runs cost budget without prices configured',
    () => postRun({ task: 'x', budget: { maxCostUsd: 1 } }),
    400,
    'cost_budget_unavailable',
  ],
  [
    'POST /v1/runs approval TTL above the maximum',
    () => postRun({ task: 'x', budget: { approvalTtlSeconds: 86_401 } }),
    400,
    'budget_over_maximum',
  ],
  [
    'POST /v1/runs confirm policy widened',
    () => postRun({ task: 'x', confirm: { mode: 'allow' } }),
    400,
    'policy_not_allowed',
  ],
  [
    'POST /v1/runs confirm mode unknown',
    () => postRun({ task: 'x', confirm: { mode: 'yolo' } }),
    400,
    'invalid_request',
  ],
  [
    'POST /v1/runs model not in the allowlist',
    () => postRun({ task: 'x', model: 'gpt-huge' }),
    400,
    'model_not_allowed',
  ],
  [
    'POST /v1/runs callback_url not a URL',
    () => postRun({ task: 'x', callback_url: 'not a url' }),
    400,
    'invalid_request',
  ],
  [
    'POST /v1/runs callback_url plain http',
    () => postRun({ task: 'x', callback_url: 'http://receiver.test/cb' }),
    400,
    'invalid_callback_url',
  ],
  [
    'POST /v1/runs callback_url with credentials',
    () => postRun({ task: 'x', callback_url: 'https://user:pw@receiver.test/cb' }),
    400,
    'invalid_callback_url',
  ],
  [
    'POST /v1/runs callback_url not http(s)',
    () => postRun({ task: 'x', callback_url: 'ftp://receiver.test/cb' }),
    400,
    'invalid_callback_url',
  ],
  [
    'POST /v1/runs metadata too large',
    () => postRun({ task: 'x', metadata: { a: 'x'.repeat(5000) } }),
    400,
    'metadata_too_large',
  ],
  [
    'POST /v1/runs Idempotency-Key too long',
    () => postRun({ task: 'x' }, { 'Idempotency-Key': 'k'.repeat(201) }),
    400,
    'invalid_idempotency_key',
  ],
  // Paths are exact: a trailing slash is another path.
  ['GET /healthz/ (trailing slash)', () => api('/healthz/'), 404, 'not_found'],
  [
    'POST /v1/runs/ (trailing slash)',
    () => api('/v1/runs/', { method: 'POST', headers: AUTH, body: '{"task":"x"}' }),
    404,
    'not_found',
  ],
  [
    'GET /v1/runs/:id/ (trailing slash)',
    () => api(`/v1/runs/${UNKNOWN_RUN}/`, { headers: AUTH }),
    404,
    'not_found',
  ],
  // GET /v1/runs/:id and /trace
  [
    'GET /v1/runs/:id unknown run',
    () => api(`/v1/runs/${UNKNOWN_RUN}`, { headers: AUTH }),
    404,
    'run_not_found',
  ],
  [
    'GET /v1/runs/:id malformed run id',
    () => api('/v1/runs/nope', { headers: AUTH }),
    404,
    'run_not_found',
  ],
  [
    'GET /v1/runs/:id bad percent-encoding',
    () => api('/v1/runs/%E0%A4%A', { headers: AUTH }),
    404,
    'run_not_found',
  ],
  [
    'GET /v1/runs/:id/trace unknown run',
    () => api(`/v1/runs/${UNKNOWN_RUN}/trace`, { headers: AUTH }),
    404,
    'run_not_found',
  ],
  // POST /v1/runs/:id/approvals/:callId
  [
    'POST approvals unknown run',
    () => decide(UNKNOWN_RUN, 'call_post', { decision: 'approve', args_hash: HASH }),
    404,
    'run_not_found',
  ],
  [
    'POST approvals malformed run id',
    () => decide('run_x', 'call_post', { decision: 'approve', args_hash: HASH }),
    404,
    'run_not_found',
  ],
  [
    'POST approvals unknown decision',
    async (runs) =>
      post(
        `/v1/runs/${(await runs()).pending.id}/approvals/call_post`,
        JSON.stringify({ decision: 'maybe', args_hash: HASH }),
      ),
    400,
    'invalid_request',
  ],
  [
    'POST approvals args_hash not a hash',
    async (runs) =>
      decide((await runs()).pending.id, 'call_post', { decision: 'approve', args_hash: 'abc' }),
    400,
    'invalid_request',
  ],
  [
    'POST approvals malformed JSON',
    async (runs) => post(`/v1/runs/${(await runs()).pending.id}/approvals/call_post`, '{'),
    400,
    'malformed_json',
  ],
  [
    'POST approvals wrong hash',
    async (runs) =>
      decide((await runs()).pending.id, 'call_post', { decision: 'approve', args_hash: HASH }),
    409,
    'hash_mismatch',
  ],
  [
    'POST approvals unknown call',
    async (runs) =>
      decide((await runs()).pending.id, 'call_nope', { decision: 'approve', args_hash: HASH }),
    404,
    'call_not_found',
  ],
  [
    'POST approvals decided call',
    async (runs) => {
      const { decided } = await runs()
      return decide(decided.id, 'call_post', { decision: 'approve', args_hash: decided.hash })
    },
    409,
    'already_decided',
  ],
  [
    'POST approvals on a finished run',
    async (runs) => {
      const { finished } = await runs()
      return decide(finished.id, finished.callId, { decision: 'approve', args_hash: HASH })
    },
    409,
    'run_finished',
  ],
  // POST /v1/runs/:id/cancel
  [
    'POST cancel unknown run',
    () => post(`/v1/runs/${UNKNOWN_RUN}/cancel`, '{}'),
    404,
    'run_not_found',
  ],
  [
    'POST cancel unknown field',
    async (runs) => post(`/v1/runs/${(await runs()).pending.id}/cancel`, '{"why":"x"}'),
    400,
    'invalid_request',
  ],
  [
    'POST cancel finished run',
    async (runs) => post(`/v1/runs/${(await runs()).finished.id}/cancel`, ''),
    409,
    'run_finished',
  ],
  // Authentication
  [
    'POST /v1/runs without auth',
    () => post('/v1/runs', '{"task":"x"}', { 'content-type': 'application/json' }),
    401,
    'unauthorized',
  ],
  ['GET /v1/runs/:id without auth', () => api(`/v1/runs/${UNKNOWN_RUN}`), 401, 'unauthorized'],
  [
    'GET /v1/runs/:id with a wrong token',
    () => api(`/v1/runs/${UNKNOWN_RUN}`, { headers: { authorization: 'Bearer test-tokem' } }),
    401,
    'unauthorized',
  ],
  [
    'GET /v1/runs/:id with Basic auth',
    () => api(`/v1/runs/${UNKNOWN_RUN}`, { headers: { authorization: 'Basic dGVzdDp0ZXN0' } }),
    401,
    'unauthorized',
  ],
  [
    'POST cancel without auth',
    () => api(`/v1/runs/${UNKNOWN_RUN}/cancel`, { method: 'POST' }),
    401,
    'unauthorized',
  ],
  [
    'webhook signed with the wrong secret',
    () => signedPost('{"task":"x"}', { secret: 'other' }),
    401,
    'invalid_signature',
  ],
  [
    'webhook signature of another body',
    () => signedPost('{"task":"x"}', { signed: '{"task":"y"}' }),
    401,
    'invalid_signature',
  ],
  [
    'webhook stale timestamp (6 minutes old)',
    () => signedPost('{"task":"x"}', { ts: Math.floor(Date.now() / 1000) - 360 }),
    401,
    'invalid_signature',
  ],
  [
    'webhook timestamp from the future (6 minutes ahead)',
    () => signedPost('{"task":"x"}', { ts: Math.floor(Date.now() / 1000) + 360 }),
    401,
    'invalid_signature',
  ],
  [
    'webhook signature without timestamp',
    () =>
      post('/v1/runs', '{"task":"x"}', {
        'content-type': 'application/json',
        'X-Edgeloop-Signature': `v1=${HASH}`,
      }),
    401,
    'invalid_signature',
  ],
  // Routing
  ['unknown route', () => api('/v2/everything', { headers: AUTH }), 404, 'not_found'],
  [
    'unknown method on /healthz',
    () => api('/healthz', { method: 'DELETE' }),
    405,
    'method_not_allowed',
  ],
  [
    'unknown sub-route of a run',
    () => api(`/v1/runs/${UNKNOWN_RUN}/steps`, { headers: AUTH }),
    404,
    'not_found',
  ],
]

describe('bad requests', () => {
  let runs: Runs | undefined
  const lazyRuns = async () => (runs ??= await makeRuns())

  it.each(table)('%s → %i %s', async (_name, send, status, code) => {
    const res = await send(lazyRuns)
    const body = (await res.json()) as { error: { code: string; message: string } }
    expect(res.headers.get('content-type')).toMatch(/^application\/json/)
    expect({ status: res.status, code: body.error?.code }).toEqual({ status, code })
    expect(body.error.message.length).toBeGreaterThan(10)
  })

  it("names what args_hash must be when the README's <argsHash> placeholder is sent as is", async () => {
    const { pending } = await lazyRuns()
    const res = await decide(pending.id, 'call_post', {
      decision: 'approve',
      args_hash: '<argsHash>',
    })
    expect(res.status).toBe(400)
    const body = (await res.json()) as { error: { message: string } }
    expect(body.error.message).toContain(
      "args_hash: must be the pending approval's argsHash (64 hex digits), as GET /v1/runs/:id shows it",
    )
    expect(body.error.message).not.toContain('regex')
  })

  it.each<[string, () => Promise<Response>]>([
    [
      'deeply nested metadata',
      () => postRun({ task: 'x', metadata: nested(3000) as Record<string, unknown> }),
    ],
    ['deeply nested JSON', () => post('/v1/runs', '['.repeat(30_000) + ']'.repeat(30_000))],
    [
      'a number beyond double range',
      () => post('/v1/runs', '{"task":"x","budget":{"maxSteps":1e400}}'),
    ],
    ['a lone surrogate in the task', () => post('/v1/runs', '{"task":"\\ud800"}')],
    [
      'a huge call id',
      () => decide(UNKNOWN_RUN, 'c'.repeat(5000), { decision: 'approve', args_hash: HASH }),
    ],
    [
      'a declared length above the limit',
      () => post('/v1/runs', '{}', { ...JSON_AUTH, 'content-length': '999999' }),
    ],
  ])('never a 5xx: %s', async (_name, send) => {
    const res = await send()
    expect(res.status).toBeGreaterThanOrEqual(200)
    expect(res.status).toBeLessThan(500)
    const body = (await res.json()) as Record<string, unknown>
    expect(body).toBeTypeOf('object')
  })
})

describe('webhook signatures', () => {
  it('accepts a valid signature and records the run as started by a webhook', async () => {
    const res = await signedPost(JSON.stringify({ task: 'From a webhook', tools: ['calculator'] }))
    expect(res.status).toBe(202)
    const { id } = (await res.json()) as { id: string }
    expect((await getRun(id)).requestedBy).toBe('webhook')
  })

  it('a replayed signed request returns the same run instead of starting another', async () => {
    const body = JSON.stringify({ task: 'Replayed webhook' })
    const ts = Math.floor(Date.now() / 1000)
    const first = await signedPost(body, { ts })
    const replay = await signedPost(body, { ts })
    expect([first.status, replay.status]).toEqual([202, 200])
    const a = (await first.json()) as { id: string }
    expect(await replay.json()).toMatchObject({ id: a.id, created: false })
  })

  it.each([
    ['GET /v1/runs/:id', 'GET', (id: string) => `/v1/runs/${id}`, ''],
    ['GET /v1/runs/:id/trace', 'GET', (id: string) => `/v1/runs/${id}/trace`, ''],
    ['POST /v1/runs/:id/cancel', 'POST', (id: string) => `/v1/runs/${id}/cancel`, ''],
    [
      'POST /v1/runs/:id/approvals/:callId',
      'POST',
      (id: string) => `/v1/runs/${id}/approvals/call_x`,
      JSON.stringify({ decision: 'approve', args_hash: 'a'.repeat(64) }),
    ],
  ])(
    '%s is refused to a webhook signature (403): only the API token reads and decides',
    async (_label, method, path, body) => {
      const started = await signedPost(JSON.stringify({ task: 'Scope' }))
      const { id } = (await started.json()) as { id: string }
      const ts = Math.floor(Date.now() / 1000)
      const res = await api(path(id), {
        method,
        headers: {
          'content-type': 'application/json',
          'X-Edgeloop-Timestamp': String(ts),
          'X-Edgeloop-Signature': await signature(WEBHOOK_SECRET, ts, body),
        },
        ...(method === 'POST' ? { body } : {}),
      })
      expect(res.status).toBe(403)
      expect(await res.json()).toMatchObject({ error: { code: 'forbidden' } })
      expect((await getRun(id)).status).not.toBe('failed')
    },
  )

  it('a valid signature is accepted for the whole 5-minute window', async () => {
    const res = await signedPost(JSON.stringify({ task: 'Late but valid' }), {
      ts: Math.floor(Date.now() / 1000) - 299,
    })
    expect(res.status).toBe(202)
  })
})

describe('idempotent starts', () => {
  it('the same Idempotency-Key returns the same run with 200', async () => {
    const first = await postRun({ task: 'Once' }, { 'Idempotency-Key': 'deploy-42' })
    const again = await postRun({ task: 'Once' }, { 'Idempotency-Key': 'deploy-42' })
    expect(first.status).toBe(202)
    expect(again.status).toBe(200)
    const a = (await first.json()) as { id: string }
    expect(await again.json()).toMatchObject({ id: a.id, created: false })
  })

  it('the same Idempotency-Key with a different request is a 409 that names the run', async () => {
    const first = await postRun({ task: 'Once' }, { 'Idempotency-Key': 'deploy-43' })
    const { id } = (await first.json()) as { id: string }
    const other = await postRun({ task: 'Something else' }, { 'Idempotency-Key': 'deploy-43' })
    expect(other.status).toBe(409)
    expect(await other.json()).toMatchObject({
      error: { code: 'idempotency_key_reused', details: { runId: id } },
    })
    expect((await getRun(id)).task).toBe('Once')
  })
})
