/**
 * The A2A endpoint on the wire (docs/serving.md#a2a): the v0.3 method names beside v1.0's, a
 * message that answers a task's question, a context continued as a conversation, and every bad
 * request answered as a JSON-RPC error with a clear message, nothing started.
 */
import { TaskState, type Task } from '@a2a-js/sdk'
import { describe, expect, it } from 'vitest'
import type { RunStoreApi } from '../../src/runs/types'
import { api, AUTH, getRun, stubOf, useServiceFakes } from '../service/harness'
import {
  ALPHA,
  clientAs,
  fetchAs,
  READER,
  runIdOf,
  sendRequest,
  sendSettled,
  userMessage,
  whileRunning,
} from './a2a-harness'

const fakes = useServiceFakes({ openai: false })

type RpcAnswer = {
  jsonrpc: string
  id: unknown
  result?: any
  error?: { code: number; message: string }
}

function rpc(body: unknown, token: string | null = ALPHA.token, raw?: string): Promise<Response> {
  return fetchAs(token)('https://edgeloop.test/a2a', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: raw ?? JSON.stringify(body),
  })
}

/** A v0.3 message/send (or message/stream) request. */
function legacySend(method: string, text: string, messageId: string, extra: object = {}) {
  return {
    jsonrpc: '2.0',
    id: 7,
    method,
    params: {
      message: {
        kind: 'message',
        messageId,
        role: 'user',
        parts: [{ kind: 'text', text }],
        ...extra,
      },
    },
  }
}

/** The v1.0 SendMessage request as JSON, for `text`. */
function send(text: string, messageId: string, metadata?: object) {
  return {
    jsonrpc: '2.0',
    id: 1,
    method: 'SendMessage',
    params: {
      message: {
        messageId,
        role: 'ROLE_USER',
        parts: [{ text }],
        ...(metadata ? { metadata } : {}),
      },
      configuration: { returnImmediately: true },
    },
  }
}

async function noRun(caller: { name: string }, messageId: string) {
  const id = await runIdOf(caller, userMessage('', { messageId }))
  expect((await api(`/v1/runs/${id}`, { headers: AUTH })).status).toBe(404)
}

describe('the v0.3 method names', () => {
  it('message/send, tasks/get, message/stream and tasks/cancel map onto the same runs', async () => {
    const messageId = `legacy-${crypto.randomUUID()}`
    const id = await runIdOf(ALPHA, userMessage('', { messageId }))
    const res = await whileRunning(
      id,
      rpc(legacySend('message/send', 'finish with Old and new.', messageId)),
    )
    expect(res.status).toBe(200)
    const sent = (await res.json()) as RpcAnswer
    expect(sent).toMatchObject({
      jsonrpc: '2.0',
      id: 7,
      result: { kind: 'task', id, status: { state: 'completed' } },
    })
    const got = (await (
      await rpc({ jsonrpc: '2.0', id: 8, method: 'tasks/get', params: { id } })
    ).json()) as RpcAnswer
    expect(got.result).toMatchObject({
      kind: 'task',
      id,
      contextId: id,
      status: { state: 'completed' },
    })
    expect(JSON.stringify(got.result.artifacts)).toContain('Old and new.')

    const waiting = `waits-${crypto.randomUUID()}`
    const other = await runIdOf(ALPHA, userMessage('', { messageId: waiting }))
    const post = 'call http_post with {"url": "https://receiver.test/x", "body": {}}'
    // The stream is read whole while the run's alarms run: it ends when the run waits.
    const { type, text } = await whileRunning(
      other,
      rpc(legacySend('message/stream', `${post}\nthen finish with No.`, waiting)).then(
        async (res) => ({ type: res.headers.get('Content-Type'), text: await res.text() }),
      ),
    )
    expect(type).toMatch(/^text\/event-stream/)
    const frames = text.split('\n\n').filter((f) => f.startsWith('data: '))
    const states = frames.map((f) => JSON.parse(f.slice(6)).result).map((r) => r.status?.state)
    expect(states.at(-1)).toBe('input-required')

    const cancel = (await (
      await whileRunning(
        other,
        rpc({ jsonrpc: '2.0', id: 9, method: 'tasks/cancel', params: { id: other } }),
      )
    ).json()) as RpcAnswer
    expect(cancel.result).toMatchObject({ id: other, status: { state: 'canceled' } })
  })
})

describe('a message to a waiting task', () => {
  it("answers the run's question, and the run goes on to its end", async () => {
    const client = await clientAs(ALPHA.token)
    const ask =
      'call ask_person with {"question": "Which region?", "choices": ["eu-west", "us-east"]}'
    const message = userMessage(`${ask}\nthen finish with Restarted.`)
    const id = await runIdOf(ALPHA, message)
    const waiting = (await whileRunning(id, client.sendMessage(sendRequest(message)))) as Task
    expect(waiting.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED)
    expect(JSON.stringify(waiting.status?.message)).toContain('Which region?')

    // An answer outside the choices is refused, the question still pending.
    const wrong = userMessage('mars', { taskId: id })
    await expect(client.sendMessage(sendRequest(wrong))).rejects.toMatchObject({
      name: 'RequestMalformedError',
      message: expect.stringMatching(/eu-west/),
    })
    const answer = userMessage('eu-west', { taskId: id })
    const done = (await whileRunning(id, client.sendMessage(sendRequest(answer)))) as Task
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED)
    const view = await getRun(id)
    expect(view.status).toBe('succeeded')
  })

  it('is refused while the run waits for an approval: a person decides it', async () => {
    const client = await clientAs(ALPHA.token)
    const post = 'call http_post with {"url": "https://receiver.test/x", "body": {}}'
    const message = userMessage(`${post}\nthen finish with No.`)
    const id = await runIdOf(ALPHA, message)
    await whileRunning(id, client.sendMessage(sendRequest(message)))
    await expect(
      client.sendMessage(sendRequest(userMessage('yes', { taskId: id }))),
    ).rejects.toMatchObject({
      name: 'UnsupportedOperationError',
      message: expect.stringContaining(
        'approval of http_post (a person decides it in Slack, the console or at',
      ),
    })
    expect((await getRun(id)).status).toBe('awaiting_approval')
  })
})

describe('a context is a conversation', () => {
  it('a message with the contextId of a finished task continues its conversation', async () => {
    const client = await clientAs(ALPHA.token)
    const first = await sendSettled(client, ALPHA, userMessage('finish with The first answer.'))
    const next = userMessage('finish with The second answer.', {
      referenceTaskIds: [first.id],
      contextId: first.task.contextId,
    })
    const second = await sendSettled(client, ALPHA, next)
    expect(second.task.contextId).toBe(first.id)
    expect((await getRun(second.id)).conversation).toMatchObject({
      id: first.id,
      position: 1,
      previousRunId: first.id,
    })
  })

  it('a message with only a contextId continues the newest run of that conversation', async () => {
    const client = await clientAs(ALPHA.token)
    const first = await sendSettled(client, ALPHA, userMessage('finish with One.'))
    const contextId = first.id
    // The index lists a conversation's runs newest first: the test clock stands still otherwise.
    fakes.clock.advance(1000)
    const second = await sendSettled(client, ALPHA, userMessage('finish with Two.', { contextId }))
    fakes.clock.advance(1000)
    const third = await sendSettled(client, ALPHA, userMessage('finish with Three.', { contextId }))
    expect((await getRun(third.id)).conversation).toMatchObject({
      id: first.id,
      position: 2,
      previousRunId: second.id,
    })
  })

  it('a contextId that names no conversation of the token is refused', async () => {
    const client = await clientAs(ALPHA.token)
    const message = userMessage('finish with No.', { contextId: `run_${'a'.repeat(32)}` })
    await expect(client.sendMessage(sendRequest(message))).rejects.toMatchObject({
      name: 'RequestMalformedError',
      message: expect.stringContaining('names no conversation of yours'),
    })
    await noRun(ALPHA, message.messageId)
  })
})

describe('streams count against the event stream limits', () => {
  it("a token's stream beyond EVENT_STREAMS_PER_TOKEN (8) ends with an error naming the limit", async () => {
    const messageId = `limits-${crypto.randomUUID()}`
    const started = (await (await rpc(send('finish with Later.', messageId))).json()) as RpcAnswer
    const id = started.result.task.id as string
    const subscribe = async () =>
      (await rpc({ jsonrpc: '2.0', id: 5, method: 'SubscribeToTask', params: { id } })).body!
    // Eight streams, each past its first event (the task), follow the run: its alarms do not run.
    const held = await Promise.all(Array.from({ length: 8 }, subscribe))
    const readers = held.map((body) => body.getReader())
    for (const reader of readers) expect((await reader.read()).done).toBe(false)
    const stub = stubOf(id) as unknown as RunStoreApi
    for (let i = 0; i < 200 && (await stub.openStreams()) < 8; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
    expect(await stub.openStreams()).toBe(8)
    const ninth = await new Response(await subscribe()).text()
    const error = ninth.split('\n\n').find((f) => f.startsWith('event: error'))
    expect(JSON.parse(error!.split('data: ')[1]!).error).toMatchObject({
      code: -32004,
      message:
        'token "alpha" holds 8 event streams (EVENT_STREAMS_PER_TOKEN); close one, or poll with GetTask',
    })
    for (const reader of readers) await reader.cancel()
  })
})

describe('the agent card', () => {
  it('is public: no token needed to discover the skills', async () => {
    const res = await fetchAs(null)('https://edgeloop.test/.well-known/agent-card.json')
    expect(res.status).toBe(200)
    const card = (await res.json()) as { skills: { id: string }[]; securitySchemes: object }
    expect(card.skills.map((s) => s.id)).toContain('default')
    expect(card.securitySchemes).toEqual({
      bearer: { httpAuthSecurityScheme: expect.objectContaining({ scheme: 'Bearer' }) },
    })
  })
})

describe('bad requests are JSON-RPC errors, and start nothing', () => {
  it.each([
    ['no token', null, 401, -32600, /Bearer <API token>/],
    ['an unknown token', 'not-a-token', 401, -32600, /invalid API token/],
  ])('%s: HTTP 401', async (_, token, status, code, message) => {
    const messageId = `anon-${crypto.randomUUID()}`
    const res = await rpc(send('finish with No.', messageId), token)
    expect(res.status).toBe(status)
    expect(res.headers.get('WWW-Authenticate')).toMatch(/^Bearer/)
    const body = (await res.json()) as RpcAnswer
    expect(body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code } })
    expect(body.error!.message).toMatch(message)
    await noRun(ALPHA, messageId)
  })

  it('a token without runs:write cannot start a task', async () => {
    const messageId = `reader-${crypto.randomUUID()}`
    const body = (await (
      await rpc(send('finish with No.', messageId), READER.token)
    ).json()) as RpcAnswer
    expect(body.error).toMatchObject({
      code: -32004,
      message: expect.stringContaining('lacks the scope runs:write'),
    })
    await noRun(READER, messageId)
  })

  it('a messageId sent again with another message is refused, the first run left as it was', async () => {
    const messageId = `twice-${crypto.randomUUID()}`
    const first = (await (await rpc(send('finish with One.', messageId))).json()) as RpcAnswer
    expect(first.result.task.status.state).toBe('TASK_STATE_WORKING')
    const again = (await (await rpc(send('finish with Two.', messageId))).json()) as RpcAnswer
    expect(again.error).toMatchObject({
      code: -32602,
      message: expect.stringContaining('messageId was already sent with a different message'),
    })
    expect((await getRun(first.result.task.id)).task).toBe('finish with One.')
  })

  it('an unknown method', async () => {
    const body = (await (
      await rpc({ jsonrpc: '2.0', id: 3, method: 'tasks/explode', params: {} })
    ).json()) as RpcAnswer
    expect(body).toMatchObject({ id: 3, error: { code: -32601 } })
  })

  it.each([
    ['an unknown method without params', { method: 'tools/list' }, -32601, /"tools\/list" is not/],
    ['SendMessage without params', { method: 'SendMessage' }, -32602, /SendMessage needs params/],
    [
      'message/send with params not an object',
      { method: 'message/send', params: [] },
      -32602,
      /needs params/,
    ],
  ])('%s says what is wrong', async (_, request, code, message) => {
    const body = (await (await rpc({ jsonrpc: '2.0', id: 4, ...request })).json()) as RpcAnswer
    expect(body).toMatchObject({ id: 4, error: { code } })
    expect(body.error!.message).toMatch(message)
  })

  it('an unknown skill names the skill, and starts nothing', async () => {
    const messageId = `skill-${crypto.randomUUID()}`
    const body = (await (
      await rpc(send('finish with No.', messageId, { skill: 'nobody' }))
    ).json()) as RpcAnswer
    expect(body.error).toMatchObject({ code: -32602, message: expect.stringContaining('nobody') })
    await noRun(ALPHA, messageId)
  })

  it.each([
    [
      'params that are not an object',
      { jsonrpc: '2.0', id: 4, method: 'SendMessage', params: [1] },
      -32602,
    ],
    [
      'a message without parts',
      {
        jsonrpc: '2.0',
        id: 4,
        method: 'SendMessage',
        params: { message: { messageId: 'm', role: 'ROLE_USER', parts: [] } },
      },
      -32602,
    ],
    [
      'a message without an id',
      {
        jsonrpc: '2.0',
        id: 4,
        method: 'SendMessage',
        params: { message: { role: 'ROLE_USER', parts: [{ text: 'hi' }] } },
      },
      -32602,
    ],
    [
      'a file part',
      {
        jsonrpc: '2.0',
        id: 4,
        method: 'SendMessage',
        params: { message: { messageId: 'f', role: 'ROLE_USER', parts: [{ raw: 'aGk=' }] } },
      },
      -32005,
    ],
    [
      'a GetTask of no run id',
      { jsonrpc: '2.0', id: 4, method: 'GetTask', params: { id: '../etc' } },
      -32001,
    ],
    ['not JSON-RPC 2.0', { jsonrpc: '1.0', id: 4, method: 'GetTask', params: { id: 'x' } }, -32602],
  ])('%s', async (_, request, code) => {
    const res = await rpc(request)
    const body = (await res.json()) as RpcAnswer
    expect(body.error?.code, JSON.stringify(body)).toBe(code)
    expect(body.error?.message.length).toBeGreaterThan(5)
  })

  it('a body that is not JSON is a parse error', async () => {
    const res = await rpc(null, ALPHA.token, '{"jsonrpc": "2.0", "method": ')
    expect(res.status).toBe(400)
    expect(((await res.json()) as RpcAnswer).error).toMatchObject({ code: -32700 })
  })

  it('an oversized body is refused before it is read whole', async () => {
    const messageId = `big-${crypto.randomUUID()}`
    const res = await rpc(send(`finish with ${'x'.repeat(70 * 1024)}`, messageId))
    expect(res.status).toBe(413)
    expect(((await res.json()) as RpcAnswer).error).toMatchObject({
      code: -32600,
      message: expect.stringContaining('65536-byte limit'),
    })
    await noRun(ALPHA, messageId)
  })

  it('a deeply nested body is refused before anything walks it', async () => {
    const messageId = `deep-${crypto.randomUUID()}`
    const request = send('finish with No.', messageId)
    const deep = '['.repeat(5000) + ']'.repeat(5000)
    const raw = JSON.stringify(request).replace('"parts":', `"metadata":{"x":${deep}},"parts":`)
    const res = await rpc(null, ALPHA.token, raw)
    expect(res.status).toBe(400)
    expect(((await res.json()) as RpcAnswer).error).toMatchObject({
      code: -32600,
      message: expect.stringContaining('deeper than'),
    })
    await noRun(ALPHA, messageId)
  })
})
