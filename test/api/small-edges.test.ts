/** Slack routes' methods and answers, and the event stream's resume header, as documented. */
import { describe, expect, it } from 'vitest'
import { reply } from '../fakes/fake-openai'
import { signedSlackRequest } from '../fakes/fake-slack'
import { api, AUTH, drainAlarms, startRun, useServiceFakes } from '../service/harness'

const fakes = useServiceFakes()

const SLACK_PATHS = ['/slack/commands', '/slack/events', '/slack/interactions']

type Doc = {
  paths: Record<string, Record<string, { parameters?: Parameter[]; responses: object }>>
}
type Parameter = { name: string; in: string; schema: { pattern?: string; maximum?: number } }

async function openApi(): Promise<Doc> {
  return (await (await api('/openapi.json')).json()) as Doc
}

describe('a Slack route asked with another method', () => {
  it.each(SLACK_PATHS.flatMap((path) => ['PUT', 'DELETE', 'PATCH', 'GET'].map((m) => [m, path])))(
    '%s %s → 405 with Allow: POST, before any signature check',
    async (method, path) => {
      const res = await api(path, { method, headers: { 'content-type': 'application/json' } })
      expect(res.status).toBe(405)
      expect(res.headers.get('Allow')).toBe('POST')
      expect(await res.json()).toMatchObject({ error: { code: 'method_not_allowed' } })
    },
  )

  it('an unknown /slack path is still a 404, and an unsigned POST still a 401', async () => {
    expect((await api('/slack/nowhere', { method: 'PUT' })).status).toBe(404)
    expect((await api('/slack/commands', { method: 'POST', body: 'x' })).status).toBe(401)
  })
})

describe("the Slack routes' documented answers", () => {
  it.each(SLACK_PATHS)('%s lists 400, 401, 405 and 413', async (path) => {
    const doc = await openApi()
    const responses = Object.keys(doc.paths[path]!.post!.responses)
    expect(responses).toEqual(expect.arrayContaining(['200', '400', '401', '405', '413']))
  })

  it('a body over the limit is the documented 413, a bad payload the documented 400', async () => {
    const doc = await openApi()
    const codes = (status: string) =>
      JSON.stringify(
        (doc.paths['/slack/events']!.post!.responses as Record<string, unknown>)[status],
      )
    const big = await api('/slack/events', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'event_callback', pad: 'x'.repeat(70_000) }),
    })
    expect(big.status).toBe(413)
    const bigCode = ((await big.json()) as { error: { code: string } }).error.code
    expect(codes('413')).toContain(bigCode)
    const bad = await api(
      '/slack/events',
      await signedSlackRequest({
        url: 'https://edgeloop.test/slack/events',
        secret: 'test-signing-secret',
        body: '{"type": 7}',
        timestamp: Math.floor(Date.now() / 1000),
      }),
    )
    expect(bad.status).toBe(400)
    const badCode = ((await bad.json()) as { error: { code: string } }).error.code
    expect(codes('400')).toContain(badCode)
  })
})

describe('Last-Event-ID as documented', () => {
  it.each([
    ['1', true],
    [' 2 ', true],
    ['', true],
    ['999999999999999', true],
    ['1000000000000000', false],
    ['-1', false],
    ['1.5', false],
    ['abc', false],
    ['0x10', false],
  ])('"%s": the server and the document agree (accepted: %s)', async (value, accepted) => {
    fakes.ai.enqueue(reply.text('Done.'))
    const id = await startRun({ task: 'Answer at once', tools: [] })
    await drainAlarms(id)
    const doc = await openApi()
    const param = doc.paths['/v1/runs/{id}/events']!.get!.parameters!.find(
      (p) => p.name === 'Last-Event-ID',
    )!
    expect(new RegExp(param.schema.pattern!).test(value)).toBe(accepted)
    const res = await api(`/v1/runs/${id}/events`, {
      headers: { ...AUTH, 'Last-Event-ID': value },
    })
    expect(res.status).toBe(accepted ? 200 : 400)
    await res.body?.cancel()
  })

  it('after: the documented maximum is the largest number the server takes', async () => {
    fakes.ai.enqueue(reply.text('Done.'))
    const id = await startRun({ task: 'Answer at once', tools: [] })
    await drainAlarms(id)
    const doc = await openApi()
    const param = doc.paths['/v1/runs/{id}/events']!.get!.parameters!.find(
      (p) => p.name === 'after',
    )!
    const max = param.schema.maximum!
    const ok = await api(`/v1/runs/${id}/events?after=${max}`, { headers: AUTH })
    expect(ok.status).toBe(200)
    await ok.body?.cancel()
    const over = await api(`/v1/runs/${id}/events?after=${max + 1}`, { headers: AUTH })
    expect(over.status).toBe(400)
  })
})

describe('a path named literally is not a parameter of another route', () => {
  it.each(['DELETE', 'POST', 'PUT'])(
    '%s /v1/runs/stream → 405 with Allow: GET, HEAD (not a run named "stream")',
    async (method) => {
      const res = await api('/v1/runs/stream', { method, headers: AUTH })
      expect(res.status).toBe(405)
      expect(res.headers.get('Allow')).toBe('GET, HEAD')
      expect(await res.json()).toMatchObject({
        error: { code: 'method_not_allowed', details: { allow: ['GET', 'HEAD'] } },
      })
    },
  )
})
