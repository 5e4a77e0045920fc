/**
 * Named tokens with scopes: API_TOKENS holds SHA-256 hashes and scopes; the decider
 * of an approval is the token's name, never a field of the request; API_TOKEN is `api`.
 */
import { describe, expect, it } from 'vitest'
import { reply } from '../fakes/fake-openai'
import {
  api,
  AUTH,
  drainAlarms,
  getRun,
  receiverPost,
  startAwaitingApproval,
  startRun,
  useServiceFakes,
} from './harness'
import { fetchWith } from './worker-with'

const fakes = useServiceFakes()

const bearer = (token: string) => ({
  authorization: `Bearer ${token}`,
  'content-type': 'application/json',
})
const READER = bearer('test-reader-token')
const STARTER = bearer('test-starter-token')
const APPROVER = bearer('test-approver-token')

const call = (path: string, headers: Record<string, string>, body?: unknown) =>
  api(path, {
    method: body === undefined ? 'GET' : 'POST',
    headers,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })

describe('scopes', () => {
  it('runs:read reads but cannot start, decide or cancel (403 naming the scope)', async () => {
    fakes.ai.enqueue(reply.toolCalls([receiverPost()]))
    const { id, argsHash } = await startAwaitingApproval()
    expect((await call(`/v1/runs/${id}`, READER)).status).toBe(200)
    expect((await call(`/v1/runs/${id}/trace`, READER)).status).toBe(200)
    for (const [path, body, scope] of [
      ['/v1/runs', { task: 'x' }, 'runs:write'],
      [
        `/v1/runs/${id}/approvals/call_post`,
        { decision: 'approve', args_hash: argsHash },
        'approvals:write',
      ],
      [`/v1/runs/${id}/cancel`, {}, 'runs:write'],
    ] as const) {
      const res = await call(path, READER, body)
      expect(res.status, path).toBe(403)
      expect(await res.json()).toMatchObject({
        error: { code: 'forbidden', details: { required: scope, scopes: ['runs:read'] } },
      })
    }
    expect((await getRun(id)).status).toBe('awaiting_approval')
  })

  it('a token without approvals:write gets 403; one with it decides, recorded under its name', async () => {
    fakes.ai.enqueue(reply.toolCalls([receiverPost()]), reply.text('Posted.'))
    const started = await call('/v1/runs', STARTER, { task: 'Post', tools: ['http_post'] })
    expect(started.status).toBe(202)
    const { id } = (await started.json()) as { id: string }
    await drainAlarms(id)
    const { argsHash } = (await getRun(id)).pendingApprovals[0]!
    const body = { decision: 'approve', args_hash: argsHash }
    const refused = await call(`/v1/runs/${id}/approvals/call_post`, STARTER, body)
    expect(refused.status).toBe(403)
    expect(await refused.json()).toMatchObject({
      error: { details: { required: 'approvals:write' } },
    })
    expect((await call('/v1/runs', APPROVER, { task: 'x' })).status).toBe(403)

    const ok = await call(`/v1/runs/${id}/approvals/call_post`, APPROVER, body)
    expect(ok.status).toBe(200)
    expect(await ok.json()).toMatchObject({ decision: 'approved', decidedBy: 'approver' })
    await drainAlarms(id)
    const view = await getRun(id)
    expect(view.requestedBy).toBe('starter')
    expect(view.result.steps[0]!.calls[0]!.approval).toMatchObject({ decidedBy: 'approver' })
    expect(fakes.receiver.hits).toHaveLength(1)
  })

  it('API_TOKEN keeps working as a full-access token named api', async () => {
    fakes.ai.enqueue(reply.toolCalls([receiverPost()]))
    const { id, argsHash } = await startAwaitingApproval()
    expect((await getRun(id)).requestedBy).toBe('api')
    const res = await call(`/v1/runs/${id}/approvals/call_post`, bearer('test-token'), {
      decision: 'deny',
      argsHash,
    })
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({ decision: 'denied', decidedBy: 'api' })
  })

  it.each([
    ['a token that is not configured', 'test-unknown-token'],
    [
      'the SHA-256 itself instead of the token',
      '0b2e8ed1ad9b540959ccfa412a59dbc86cf6a4874072936c2233bda4ced1e1c6',
    ],
  ])('%s is 401', async (_label, token) => {
    const res = await call('/v1/runs', bearer(token), { task: 'x' })
    expect(res.status).toBe(401)
    expect(await res.json()).toMatchObject({ error: { code: 'unauthorized' } })
  })
})

describe('the decider is never a field the caller chooses', () => {
  it.each([
    [
      'approvals',
      (id: string, hash: string) =>
        [
          `/v1/runs/${id}/approvals/call_post`,
          { decision: 'approve', args_hash: hash, by: 'UAPPROVER1' },
        ] as const,
    ],
    [
      'cancel',
      (id: string) => [`/v1/runs/${id}/cancel`, { reason: 'x', by: 'UAPPROVER1' }] as const,
    ],
  ])('"by" in %s is refused with 400 by_not_accepted, and nothing changes', async (_l, make) => {
    fakes.ai.enqueue(reply.toolCalls([receiverPost()]))
    const { id, argsHash } = await startAwaitingApproval()
    const [path, body] = make(id, argsHash)
    const res = await call(path, bearer('test-token'), body)
    expect(res.status).toBe(400)
    expect(await res.json()).toMatchObject({ error: { code: 'by_not_accepted' } })
    const view = await getRun(id)
    expect(view.status).toBe('awaiting_approval')
    expect(view.pendingApprovals).toHaveLength(1)
  })

  it('args_hash and argsHash are both accepted; two different ones are refused', async () => {
    fakes.ai.enqueue(reply.toolCalls([receiverPost()]))
    const { id, argsHash } = await startAwaitingApproval()
    const both = await call(`/v1/runs/${id}/approvals/call_post`, APPROVER, {
      decision: 'approve',
      args_hash: argsHash,
      argsHash: 'b'.repeat(64),
    })
    expect(both.status).toBe(400)
    const none = await call(`/v1/runs/${id}/approvals/call_post`, APPROVER, { decision: 'approve' })
    expect(none.status).toBe(400)
    const camel = await call(`/v1/runs/${id}/approvals/call_post`, APPROVER, {
      decision: 'approve',
      argsHash,
    })
    expect(camel.status).toBe(200)
  })
})

describe('API_TOKENS problems', () => {
  it.each([
    ['not JSON', '{name: ci}', /API_TOKENS must be JSON/],
    [
      'the token instead of its hash',
      '[{"name":"ci","token":"abc","scopes":["runs:read"]}]',
      /SHA-256/,
    ],
    [
      'an unknown scope',
      `[{"name":"ci","sha256":"${'a'.repeat(64)}","scopes":["admin"]}]`,
      /scopes/,
    ],
    [
      'a name posing as a Slack user',
      `[{"name":"UAPPROVER1","sha256":"${'a'.repeat(64)}","scopes":["runs:read"]}]`,
      /name/,
    ],
    [
      'the name api while API_TOKEN is set',
      `[{"name":"api","sha256":"${'a'.repeat(64)}","scopes":["runs:read"]}]`,
      /API_TOKEN/,
    ],
  ])('%s is a 503 naming API_TOKENS', async (_label, value, message) => {
    const res = await fetchWith({ API_TOKENS: value }, '/v1/runs', { headers: AUTH })
    expect(res.status).toBe(503)
    const json = (await res.json()) as { error: { code: string; message: string } }
    expect(json.error.code).toBe('misconfigured')
    expect(json.error.message).toMatch(/API_TOKENS/)
    expect(json.error.message).toMatch(message)
  })

  it('API_TOKENS alone (no API_TOKEN) authenticates by hash', async () => {
    const id = await startRun({ task: 'Exists' })
    const res = await fetchWith({ API_TOKEN: undefined }, `/v1/runs/${id}`, { headers: READER })
    expect(res.status).toBe(200)
    const legacy = await fetchWith({ API_TOKEN: undefined }, `/v1/runs/${id}`, { headers: AUTH })
    expect(legacy.status).toBe(401)
  })
})
