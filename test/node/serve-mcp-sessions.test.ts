/**
 * `/mcp` sessions and resumable call streams (docs/serving.md#sessions-and-resumption) against
 * the Worker as deployed, with MCP_WAIT_SECONDS=1 so that a call waiting for a person has its
 * stream closed mid-call: the priming event first with its `retry:`, the close, and GET with
 * Last-Event-ID carrying the rest (progress, then the result as the response to the original
 * request id), through raw HTTP and through the MCP SDK's own client. Forged, altered and
 * another token's ids are refused and leak nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
  type ElicitRequest,
  type ElicitResult,
} from '@modelcontextprotocol/sdk/types.js'
import { mcpClient, startMcpWorker, TOKENS, type McpWorker } from './serve-mcp/mcp-worker.ts'
import { runApi } from './serve-mcp/run-api.ts'
import { sessionId } from '../../src/serve/mcp/signed-ids.ts'

let worker: McpWorker

beforeAll(async () => {
  worker = await startMcpWorker({
    MCP_WAIT_SECONDS: '1',
    ENABLED_TOOLS: 'calculator,rollback_deploy,ask_person',
  })
}, 120_000)
afterAll(() => worker?.stop())

/** A run that rolls `service` back, once a person approves. */
const rollback = (service = 'order', version = 'v1.0.1') =>
  `call \`rollback_deploy\` with {"service": "${service}", "to_version": "${version}", "reason": "over MCP"}, then finish with Rolled back.`
const ROLLBACK = rollback()
const VERSION = '2025-11-25'

const { api, approveWhenAsked } = runApi(() => worker)

async function untilStatus(runId: string, status: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if ((await api(`/v1/runs/${runId}`, TOKENS.alpha)).status === status) return
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error(`run ${runId} never reached ${status}`)
}

interface SseEvent {
  id?: string
  retry?: number
  data: string
}

/** The events of a whole SSE body, in order, as the SSE spec reads them. */
function sseEvents(text: string): SseEvent[] {
  return text
    .split(/\n\n/)
    .filter((block) => block.trim())
    .map((block) => {
      const event: SseEvent = { data: '' }
      const data: string[] = []
      for (const line of block.split('\n')) {
        const [field, ...rest] = line.split(':')
        const value = rest.join(':').replace(/^ /, '')
        if (field === 'id') event.id = value
        if (field === 'retry') event.retry = Number(value)
        if (field === 'data') data.push(value)
      }
      event.data = data.join('\n')
      return event
    })
}

const messages = (events: SseEvent[]) => events.filter((e) => e.data).map((e) => JSON.parse(e.data))

function mcp(token: string, headers: Record<string, string> = {}) {
  return {
    Authorization: `Bearer ${token}`,
    'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream',
    'MCP-Protocol-Version': VERSION,
    ...headers,
  }
}

/** Initializes as `token` with raw HTTP; the session id it answers. */
async function initialize(token: string, capabilities: Record<string, unknown> = {}) {
  const res = await fetch(worker.url, {
    method: 'POST',
    headers: mcp(token),
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: VERSION, capabilities, clientInfo: { name: 'raw', version: '1' } },
    }),
  })
  expect(res.status).toBe(200)
  await res.text()
  const session = res.headers.get('mcp-session-id')
  expect(session).toMatch(/^s1\.[\w-]+\.[0-9a-f]{64}$/)
  return session!
}

function callTool(token: string, session: string, id: number, task: string, progress?: string) {
  return fetch(worker.url, {
    method: 'POST',
    headers: mcp(token, { 'Mcp-Session-Id': session }),
    body: JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: {
        name: 'default',
        arguments: { task },
        ...(progress ? { _meta: { progressToken: progress } } : {}),
      },
    }),
  })
}

function resume(token: string, session: string | null, lastEventId: string | null) {
  return fetch(worker.url, {
    headers: {
      Authorization: `Bearer ${token}`,
      Accept: 'text/event-stream',
      'MCP-Protocol-Version': VERSION,
      ...(session ? { 'Mcp-Session-Id': session } : {}),
      ...(lastEventId ? { 'Last-Event-ID': lastEventId } : {}),
    },
  })
}

/** A call of ROLLBACK whose stream the server closed while it waits: its events and run id. */
async function closedCall(session: string, id: number, progress?: string) {
  const res = await callTool(TOKENS.alpha, session, id, ROLLBACK, progress)
  expect(res.headers.get('content-type')).toContain('text/event-stream')
  // The body ends: the server closed the stream at MCP_WAIT_SECONDS, before any result.
  const events = sseEvents(await res.text())
  const runId = /run (run_[0-9a-f]{32})/.exec(JSON.stringify(messages(events)))?.[1]
  expect(runId).toBeDefined()
  return { events, runId: runId! }
}

describe('/mcp sessions', () => {
  it('initialize answers a signed Mcp-Session-Id; requests in it are answered', async () => {
    const session = await initialize(TOKENS.alpha)
    const res = await fetch(worker.url, {
      method: 'POST',
      headers: mcp(TOKENS.alpha, { 'Mcp-Session-Id': session }),
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    })
    expect(res.status).toBe(200)
    expect(messages(sseEvents(await res.text()))[0].result.tools.length).toBeGreaterThan(0)
  })

  it("another token's session, or an altered one, is 404 and names nothing of it", async () => {
    const beta = await initialize(TOKENS.beta)
    const [kind, payload, mac] = beta.split('.')
    const altered = `${kind}.${payload}.${mac!.replace(/^./, (c) => (c === '0' ? '1' : '0'))}`
    for (const [token, session] of [
      [TOKENS.alpha, beta],
      [TOKENS.beta, altered],
      [TOKENS.beta, 'not-a-session'],
    ] as const) {
      const res = await fetch(worker.url, {
        method: 'POST',
        headers: mcp(token, { 'Mcp-Session-Id': session }),
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
      })
      expect(res.status).toBe(404)
      const body = (await res.json()) as any
      expect(body.error.code).toBe('session_not_found')
      expect(JSON.stringify(body)).not.toContain(session)
    }
  })

  it('a session past MCP_SESSION_TTL_SECONDS (a day here) is 404 and says it expired', async () => {
    const issued = await initialize(TOKENS.alpha)
    const body = JSON.parse(Buffer.from(issued.split('.')[1]!, 'base64url').toString()) as {
      sub: string
      el: number
      iat: number
    }
    expect(Math.abs(body.iat * 1000 - Date.now())).toBeLessThan(60_000)
    // The same session as the Worker signs it, issued a day and a minute ago, or a minute ago.
    const signed = (agoMs: number) =>
      sessionId('mcp-session-test-secret', {
        sub: body.sub,
        elicitation: body.el === 1,
        issuedAt: Date.now() - agoMs,
      })
    const ping = (session: string) =>
      fetch(worker.url, {
        method: 'POST',
        headers: mcp(TOKENS.alpha, { 'Mcp-Session-Id': session }),
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
      })
    expect((await ping(await signed(60_000))).status).toBe(200)
    const expired = await ping(await signed(86_460_000))
    expect(expired.status).toBe(404)
    const refusal = (await expired.json()) as any
    expect(refusal.error.code).toBe('session_not_found')
    expect(refusal.error.message).toContain('expired')
    expect(refusal.error.message).toContain('MCP_SESSION_TTL_SECONDS')
  })

  it('DELETE is 405 (a signed session keeps nothing to end); GET without a session is 400', async () => {
    const session = await initialize(TOKENS.alpha)
    const del = await fetch(worker.url, {
      method: 'DELETE',
      headers: { Authorization: `Bearer ${TOKENS.alpha}`, 'Mcp-Session-Id': session },
    })
    expect(del.status).toBe(405)
    expect(((await del.json()) as any).error.code).toBe('method_not_allowed')
    const noSession = await resume(TOKENS.alpha, null, 'e1.x.y')
    expect(noSession.status).toBe(400)
    expect(((await noSession.json()) as any).error.code).toBe('session_required')
    const notSse = await fetch(worker.url, {
      headers: {
        Authorization: `Bearer ${TOKENS.alpha}`,
        Accept: 'application/json',
        'Last-Event-ID': 'e1.x.y',
      },
    })
    expect(notSse.status).toBe(406)
  })
})

describe('/mcp resumable call streams', () => {
  it('primes the stream, closes it mid-call, and GET with Last-Event-ID answers the result', async () => {
    const session = await initialize(TOKENS.alpha)
    const { events, runId } = await closedCall(session, 7)
    // The priming event first: an id and empty data, with the retry field.
    expect(events[0]).toMatchObject({ data: '', retry: 1000, id: expect.stringMatching(/^e1\./) })
    // Every event has an id; none is the call's response.
    expect(events.every((e) => e.id)).toBe(true)
    expect(messages(events).some((m) => m.id === 7)).toBe(false)
    expect(JSON.stringify(messages(events))).toContain('approval of rollback_deploy')

    await approveWhenAsked(runId, TOKENS.alpha)
    await untilStatus(runId, 'succeeded')
    const resumed = await resume(TOKENS.alpha, session, events.at(-1)!.id!)
    expect(resumed.status).toBe(200)
    expect(resumed.headers.get('content-type')).toContain('text/event-stream')
    const rest = sseEvents(await resumed.text())
    const answer = messages(rest).find((m) => m.id === 7)
    expect(answer).toMatchObject({
      jsonrpc: '2.0',
      id: 7,
      result: { structuredContent: { answer: 'Rolled back.' } },
    })
    expect(rest.find((e) => e.data.includes('"id":7'))?.id).toMatch(/^e1\./)
    // Resumed from the priming event alone, the same result: the id named the run already.
    const fromStart = messages(
      sseEvents(await (await resume(TOKENS.alpha, session, events[0]!.id!)).text()),
    )
    expect(fromStart.find((m) => m.id === 7)?.result.structuredContent).toEqual({
      answer: 'Rolled back.',
    })
    // The side effect ran once.
    const trace = await api(`/v1/runs/${runId}/trace`, TOKENS.alpha)
    const calls = trace.steps.flatMap((s: { calls: { name: string }[] }) => s.calls)
    expect(calls.map((c: { name: string }) => c.name)).toEqual(['rollback_deploy'])
  })

  it('a resumed stream that still waits sends progress, then closes again for the next poll', async () => {
    const session = await initialize(TOKENS.alpha)
    const { events, runId } = await closedCall(session, 8, 'tok-8')
    const sent = messages(events).filter((m) => m.method === 'notifications/progress')
    expect(sent.length).toBeGreaterThan(0)
    const last = sent.at(-1).params.progress
    const again = sseEvents(await (await resume(TOKENS.alpha, session, events.at(-1)!.id!)).text())
    expect(again[0]?.retry).toBe(1000)
    const more = messages(again).filter((m) => m.method === 'notifications/progress')
    expect(more[0]).toMatchObject({ params: { progressToken: 'tok-8' } })
    expect(more[0].params.progress).toBeGreaterThan(last)
    expect(messages(again).some((m) => m.id === 8)).toBe(false)
    await approveWhenAsked(runId, TOKENS.alpha)
  })

  it("another token's event id, an altered one, or one of another session's token is not found", async () => {
    const alpha = await initialize(TOKENS.alpha)
    const beta = await initialize(TOKENS.beta)
    const { events, runId } = await closedCall(alpha, 9)
    const id = events.at(-1)!.id!
    const [kind, payload] = id.split('.')
    const forged = `${kind}.${payload}.${'0'.repeat(64)}`
    for (const [token, session, lastEventId, code] of [
      [TOKENS.beta, beta, id, 'stream_not_found'],
      [TOKENS.alpha, alpha, forged, 'stream_not_found'],
      [TOKENS.alpha, alpha, 'garbage', 'stream_not_found'],
      [TOKENS.beta, alpha, id, 'session_not_found'],
    ] as const) {
      const res = await resume(token, session, lastEventId)
      expect(res.status, `${code} ${lastEventId.slice(0, 12)}`).toBe(404)
      const body = (await res.json()) as any
      expect(body.error.code).toBe(code)
      expect(JSON.stringify(body)).not.toContain(runId)
    }
    await approveWhenAsked(runId, TOKENS.alpha)
  })

  it("the MCP SDK's client resumes on its own and receives the structured result", async () => {
    const client = await mcpClient(worker.url, TOKENS.alpha)
    const progress: string[] = []
    const logs: string[] = []
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      logs.push(String((n.params.data as { message: string }).message))
    })
    const call = client.callTool(
      { name: 'default', arguments: { task: rollback('payments') } },
      undefined,
      { onprogress: (p) => progress.push(p.message ?? ''), timeout: 60_000 },
    )
    for (let i = 0; i < 100 && !logs.length; i++) await new Promise((r) => setTimeout(r, 50))
    const runId = /run (run_[0-9a-f]{32})/.exec(logs[0] ?? '')?.[1]
    expect(runId, logs.join('\n')).toBeDefined()
    // Past at least one close (MCP_WAIT_SECONDS = 1), a person approves in the API.
    await new Promise((r) => setTimeout(r, 2_500))
    await approveWhenAsked(runId!, TOKENS.alpha)
    const result = await call
    expect(result.structuredContent).toEqual({ answer: 'Rolled back.' })
    expect((result._meta as any)['edgeloop/run'].id).toBe(runId)
    expect(progress.some((m) => m.includes('approval of rollback_deploy'))).toBe(true)
    await client.close()
  })
})

describe('/mcp pending items offered through elicitation', () => {
  /** A client declaring elicitation whose handler answers with `answer` (after `before`). */
  async function elicitingClient(
    answer: ElicitResult,
    before: (request: ElicitRequest) => Promise<void> = async () => {},
  ) {
    const client = await mcpClient(worker.url, TOKENS.alpha, { capabilities: { elicitation: {} } })
    const asked: { id: string; params: ElicitRequest['params'] }[] = []
    const errors: string[] = []
    client.onerror = (err) => errors.push(err.message)
    client.setRequestHandler(ElicitRequestSchema, async (request, extra) => {
      asked.push({ id: String(extra.requestId), params: request.params })
      await before(request)
      return answer
    })
    return { client, asked, errors }
  }

  const runOf = (result: { _meta?: unknown }) =>
    (result._meta as { 'edgeloop/run': { id: string } })['edgeloop/run'].id

  async function callsOf(runId: string) {
    const trace = await api(`/v1/runs/${runId}/trace`, TOKENS.alpha)
    return trace.steps.flatMap((s: { calls: unknown[] }) => s.calls) as Record<string, any>[]
  }

  /** The run's one call, rollback_deploy, approved by alpha and run (once: one call, done). */
  async function expectRolledBackOnce(runId: string) {
    const calls = await callsOf(runId)
    expect(calls.map((c) => c.name)).toEqual(['rollback_deploy'])
    expect(calls[0]).toMatchObject({
      status: 'done',
      approval: { decision: 'approved', decidedBy: 'alpha' },
    })
    expect(calls[0]!.observation).not.toMatch(/^\[ToolError\]/)
  }

  it('approved in the client: the side effect runs once and the call answers its result', async () => {
    const { client, asked } = await elicitingClient({
      action: 'accept',
      content: { decision: 'approve' },
    })
    const result = await client.callTool(
      { name: 'default', arguments: { task: rollback('inventory', 'v1.8.0') } },
      undefined,
      { timeout: 30_000 },
    )
    expect(result.structuredContent).toEqual({ answer: 'Rolled back.' })
    expect(asked[0]?.params).toMatchObject({
      mode: 'form',
      message: expect.stringContaining('rollback_deploy'),
      requestedSchema: { properties: { decision: { enum: ['approve', 'deny'] } } },
    })
    await expectRolledBackOnce(runOf(result))
    await client.close()
  })

  it('declined in the client: the run gets the denial and nothing runs', async () => {
    const { client, asked } = await elicitingClient({ action: 'decline' })
    const result = await client.callTool(
      { name: 'default', arguments: { task: rollback('gateway') } },
      undefined,
      { timeout: 30_000 },
    )
    expect(asked.length).toBeGreaterThan(0)
    const calls = await callsOf(runOf(result))
    expect(calls).toHaveLength(1)
    expect(calls[0]).toMatchObject({
      kind: 'denied',
      approval: { decision: 'denied', reason: 'declined in the MCP client (elicitation)' },
    })
    await client.close()
  })

  it('decided in the API first: the answer through the client is refused and changes nothing', async () => {
    let approved: Promise<void> | null = null
    const { client, asked, errors } = await elicitingClient(
      { action: 'accept', content: { decision: 'deny' } },
      // The client answers only once the person's approval in the API is in.
      async () => {
        for (let i = 0; i < 100 && !approved; i++) await new Promise((r) => setTimeout(r, 20))
        await approved
      },
    )
    client.setNotificationHandler(LoggingMessageNotificationSchema, async (n) => {
      const data = JSON.stringify(n.params.data)
      const id = /run (run_[0-9a-f]{32})/.exec(data)?.[1]
      if (id && !approved && data.includes('waiting for a person')) {
        approved = approveWhenAsked(id, TOKENS.alpha)
      }
    })
    const result = await client.callTool(
      { name: 'default', arguments: { task: rollback('payments', 'v5.1.0') } },
      undefined,
      { timeout: 30_000 },
    )
    expect(result.structuredContent).toEqual({ answer: 'Rolled back.' })
    await expectRolledBackOnce(runOf(result))
    // The client's late "deny" got a clear refusal; sent again by hand, the same.
    const session = (client.transport as { sessionId?: string }).sessionId!
    expect(asked.length).toBeGreaterThan(0)
    expect(errors.join('\n')).toMatch(/already/)
    {
      const again = await fetch(worker.url, {
        method: 'POST',
        headers: mcp(TOKENS.alpha, { 'Mcp-Session-Id': session }),
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: asked[0]!.id,
          result: { action: 'accept', content: { decision: 'deny' } },
        }),
      })
      expect(again.status).toBe(409)
      const body = (await again.json()) as any
      expect(body.error).toMatchObject({ code: 'already_decided', details: { decidedBy: 'alpha' } })
    }
    await client.close()
  })

  it('a question is offered as its own form, and the answer from the client answers it', async () => {
    const { client, asked } = await elicitingClient({ action: 'accept', content: { answer: 'eu' } })
    const result = await client.callTool(
      {
        name: 'default',
        arguments: {
          task: 'call `ask_person` with {"question": "Which region?", "choices": ["eu", "us"]}, then finish with Asked.',
        },
      },
      undefined,
      { timeout: 30_000 },
    )
    expect(asked[0]?.params).toMatchObject({
      mode: 'form',
      message: 'Which region?',
      requestedSchema: { properties: { answer: { type: 'string', enum: ['eu', 'us'] } } },
    })
    const calls = await callsOf(runOf(result))
    expect(calls[0]).toMatchObject({
      name: 'ask_person',
      approval: { kind: 'question', decision: 'approved', answer: 'eu', decidedBy: 'alpha' },
    })
    await client.close()
  })

  it("a forged offer id, or another token's, is not found and decides nothing", async () => {
    const { client, asked } = await elicitingClient({ action: 'cancel' })
    const call = client.callTool(
      { name: 'default', arguments: { task: rollback('order') } },
      undefined,
      { timeout: 30_000 },
    )
    for (let i = 0; i < 100 && !asked.length; i++) await new Promise((r) => setTimeout(r, 50))
    expect(asked.length).toBeGreaterThan(0)
    const offer = asked[0]!.id
    const [kind, payload] = offer.split('.')
    const beta = await initialize(TOKENS.beta)
    const alpha = (client.transport as { sessionId?: string }).sessionId!
    for (const [token, session, id] of [
      [TOKENS.alpha, alpha, `${kind}.${payload}.${'0'.repeat(64)}`],
      [TOKENS.beta, beta, offer],
    ] as const) {
      const res = await fetch(worker.url, {
        method: 'POST',
        headers: mcp(token, { 'Mcp-Session-Id': session }),
        body: JSON.stringify({
          jsonrpc: '2.0',
          id,
          result: { action: 'accept', content: { decision: 'approve' } },
        }),
      })
      expect(res.status).toBe(404)
      expect(((await res.json()) as any).error.code).toBe('offer_not_found')
    }
    // Cancelled in the client and refused above: the approval still waits, for a person to decide.
    const waiting = (await api('/v1/runs?limit=100', TOKENS.alpha)).items.filter(
      (r: { status: string }) => r.status === 'awaiting_approval',
    )
    expect(waiting.length).toBeGreaterThan(0)
    for (const r of waiting) await approveWhenAsked(r.id, TOKENS.alpha)
    expect((await call).structuredContent).toEqual({ answer: 'Rolled back.' })
    await client.close()
  })
})
