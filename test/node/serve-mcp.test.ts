/**
 * `/mcp` (docs/serving.md#mcp) through the MCP SDK's own client against the Worker as deployed:
 * every agent a tool, a call a run, long runs as tasks, a person's approval in the middle, and
 * what a bad request is told.
 */
import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  GetTaskResultSchema,
  type Task,
} from '@modelcontextprotocol/sdk/types.js'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import {
  mcpBindings,
  mcpClient,
  startMcpWorker,
  TOKENS,
  type McpWorker,
} from './serve-mcp/mcp-worker.ts'
import { runApi } from './serve-mcp/run-api.ts'

let worker: McpWorker

beforeAll(async () => {
  worker = await startMcpWorker()
}, 120_000)
afterAll(() => worker?.stop())

const ROLLBACK =
  'call `rollback_deploy` with {"service": "order", "to_version": "v2.13.2", "reason": "over MCP"}, then finish with Rolled back.'

const { api, approveWhenAsked } = runApi(() => worker)

const callAsTask = (client: Client, name: string, args: Record<string, unknown>) =>
  client.request(
    { method: 'tools/call', params: { name, arguments: args, task: { ttl: 60_000 } } },
    CreateTaskResultSchema,
  )
const getTask = (client: Client, taskId: string): Promise<Task> =>
  client.request({ method: 'tasks/get', params: { taskId } }, GetTaskResultSchema)
const taskResult = (client: Client, taskId: string) =>
  client.request({ method: 'tasks/result', params: { taskId } }, CallToolResultSchema, {
    timeout: 30_000,
  })

async function until(client: Client, taskId: string, status: Task['status']): Promise<Task> {
  for (let i = 0; i < 300; i++) {
    const task = await getTask(client, taskId)
    if (task.status === status) return task
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error(`task ${taskId} never reached ${status}`)
}

describe('/mcp with the MCP SDK client', () => {
  it('lists every agent as a tool, with its output schema', async () => {
    const client = await mcpClient(worker.url, TOKENS.alpha)
    expect(client.getServerVersion()).toMatchObject({ name: 'edgeloop' })
    expect(client.getServerCapabilities()).toMatchObject({
      tools: {},
      tasks: { requests: { tools: { call: {} } }, cancel: {} },
    })
    const { tools } = await client.listTools()
    const triage = tools.find((t) => t.name === 'triage')
    expect(triage).toMatchObject({
      description: expect.stringContaining('Triages'),
      inputSchema: { type: 'object', required: ['task'] },
      outputSchema: { type: 'object', required: expect.arrayContaining(['severity']) },
      execution: { taskSupport: 'optional' },
    })
    // An agent without an output schema answers text, as `{ answer }`.
    expect(tools.find((t) => t.name === 'default')?.outputSchema).toMatchObject({
      properties: { answer: { type: 'string' } },
    })
    await client.close()
  })

  it('calls an agent and answers its structured output', async () => {
    const client = await mcpClient(worker.url, TOKENS.alpha)
    const output = {
      severity: 'sev2',
      component: 'checkout',
      summary: 'Checkout fails for EU cards.',
    }
    const result = await client.callTool({
      name: 'triage',
      arguments: { task: `finish with ${JSON.stringify(output)}` },
    })
    expect(result.isError).toBeFalsy()
    expect(result.structuredContent).toEqual(output)
    expect(JSON.parse((result.content as { text: string }[])[0]!.text)).toEqual(output)
    // The run is the API's like any other: started by the token, as its requester and owner.
    const runId = (result._meta as any)['edgeloop/run'].id
    expect(await api(`/v1/runs/${runId}`, TOKENS.alpha)).toMatchObject({
      status: 'succeeded',
      requestedBy: 'alpha',
      agent: { name: 'triage' },
    })
    await client.close()
  })

  it('a call without a task waits for the approval, with progress, and answers after it', async () => {
    const client = await mcpClient(worker.url, TOKENS.alpha)
    const progress: string[] = []
    const logs: string[] = []
    client.setNotificationHandler(
      (await import('@modelcontextprotocol/sdk/types.js')).LoggingMessageNotificationSchema,
      (n) => {
        logs.push(String((n.params.data as { message: string }).message))
      },
    )
    const call = client.callTool({ name: 'default', arguments: { task: ROLLBACK } }, undefined, {
      onprogress: (p) => progress.push(p.message ?? ''),
      timeout: 60_000,
    })
    // The run's id comes in the first log message; a person approves through the API.
    for (let i = 0; i < 100 && !logs.length; i++) await new Promise((r) => setTimeout(r, 50))
    const runId = /run (run_[0-9a-f]{32})/.exec(logs[0] ?? '')?.[1]
    expect(runId, logs.join('\n')).toBeDefined()
    // The client hears what the run waits for before anyone decides.
    const asked = (m: string) => m.includes('approval of rollback_deploy')
    for (let i = 0; i < 200 && !progress.some(asked); i++)
      await new Promise((r) => setTimeout(r, 50))
    expect(progress.some(asked), progress.join('\n')).toBe(true)
    expect(logs.some(asked)).toBe(true)
    await approveWhenAsked(runId!, TOKENS.alpha)
    const result = await call
    expect(result.structuredContent).toEqual({ answer: 'Rolled back.' })
    await client.close()
  })

  it('a call as a task: tasks/get follows the run, through its approval, tasks/result answers', async () => {
    const client = await mcpClient(worker.url, TOKENS.alpha)
    const { task } = await callAsTask(client, 'default', { task: ROLLBACK })
    expect(task.taskId).toMatch(/^run_[0-9a-f]{32}$/)
    const waiting = await until(client, task.taskId, 'input_required')
    expect(waiting.statusMessage).toContain('approval of rollback_deploy')
    await approveWhenAsked(task.taskId, TOKENS.alpha)
    const result = await taskResult(client, task.taskId)
    expect(result.structuredContent).toEqual({ answer: 'Rolled back.' })
    expect(await getTask(client, task.taskId)).toMatchObject({ status: 'completed' })
    // Another client, as after a reconnect: the task is the run's, nothing was held apart.
    const again = await mcpClient(worker.url, TOKENS.alpha)
    expect((await taskResult(again, task.taskId)).structuredContent).toEqual({
      answer: 'Rolled back.',
    })
    await client.close()
    await again.close()
  })

  it('tasks/cancel cancels the run', async () => {
    const client = await mcpClient(worker.url, TOKENS.alpha)
    const { task } = await callAsTask(client, 'default', { task: ROLLBACK })
    await until(client, task.taskId, 'input_required')
    const cancelled = await client.request(
      { method: 'tasks/cancel', params: { taskId: task.taskId } },
      GetTaskResultSchema,
    )
    expect(cancelled.taskId).toBe(task.taskId)
    const ended = await until(client, task.taskId, 'cancelled')
    expect(ended.statusMessage).toContain('cancelled')
    const view = await api(`/v1/runs/${task.taskId}`, TOKENS.alpha)
    expect(view).toMatchObject({ status: 'failed', result: { stopReason: 'cancelled' } })
    await client.close()
  })

  it("another token's task is not found, exactly as an id no run has", async () => {
    const alpha = await mcpClient(worker.url, TOKENS.alpha)
    const beta = await mcpClient(worker.url, TOKENS.beta)
    const { task } = await callAsTask(alpha, 'triage', {
      task: 'finish with {"severity": "sev3", "component": "docs", "summary": "A typo."}',
    })
    const unknown = 'run_' + '0'.repeat(32)
    for (const taskId of [task.taskId, unknown]) {
      for (const method of ['tasks/get', 'tasks/result', 'tasks/cancel'] as const) {
        const err = await beta.request({ method, params: { taskId } }, GetTaskResultSchema).then(
          () => null,
          (e: Error) => e,
        )
        expect(err?.message, `${method} ${taskId}`).toMatch(/Task not found/)
        expect(err?.message).not.toContain('alpha')
      }
    }
    await alpha.close()
    await beta.close()
  })

  it("continues a conversation of its own runs; another token's run is not found", async () => {
    const alpha = await mcpClient(worker.url, TOKENS.alpha)
    const first = await alpha.callTool({
      name: 'default',
      arguments: { task: 'finish with The code word is heron.' },
    })
    const runId = (first._meta as any)['edgeloop/run'].id
    const next = await alpha.callTool({
      name: 'default',
      arguments: { task: 'finish with Noted.', conversation: runId },
    })
    const nextId = (next._meta as any)['edgeloop/run'].id
    expect(await api(`/v1/runs/${nextId}`, TOKENS.alpha)).toMatchObject({
      conversation: { previousRunId: runId, position: 1 },
    })
    const beta = await mcpClient(worker.url, TOKENS.beta)
    await expect(
      beta.callTool({ name: 'default', arguments: { task: 'finish with x', conversation: runId } }),
    ).rejects.toThrow(`conversation: no run ${runId}`)
    await alpha.close()
    await beta.close()
  })

  it.each([
    [
      { name: 'nope', arguments: { task: 'x' } },
      /unknown tool "nope"; the agents offered are .*triage/,
    ],
    [{ name: 'triage', arguments: {} }, /arguments of triage are invalid: task: missing/],
    [{ name: 'triage', arguments: { task: '   ' } }, /task: must be >= 1/],
    [{ name: 'triage', arguments: { task: 'x', budget: 1 } }, /unknown argument budget/],
    [
      { name: 'triage', arguments: { task: 'x', conversation: 'yesterday' } },
      /conversation: must be a run id/,
    ],
  ])('refuses %j with a JSON-RPC error, starting nothing', async (params, message) => {
    const client = await mcpClient(worker.url, TOKENS.beta)
    const before = (await api('/v1/runs?limit=100', TOKENS.beta)).items.length
    await expect(client.callTool(params as never)).rejects.toThrow(message)
    expect((await api('/v1/runs?limit=100', TOKENS.beta)).items.length).toBe(before)
    await client.close()
  })
})

const INSPECTOR = join(import.meta.dirname, '../../scripts/inspector.mjs')

/** The MCP Inspector's command line against /mcp, as docs/serving.md runs it; its JSON output. */
async function inspector(...args: string[]): Promise<any> {
  // From the repository's root, where a user runs `npm run inspector`: the script runs the CLI
  // from its build folder, which 1.0.3 needs to find its package.json.
  const run = promisify(execFile)
  const { stdout } = await run(
    process.execPath,
    [
      INSPECTOR,
      worker.url.href,
      '--transport',
      'http',
      '--header',
      `Authorization: Bearer ${TOKENS.alpha}`,
      ...args,
    ],
    { cwd: join(import.meta.dirname, '../..') },
  )
  return JSON.parse(stdout)
}

describe('/mcp with the MCP Inspector CLI', () => {
  it('lists the agents and calls one', async () => {
    const { tools } = await inspector('--method', 'tools/list')
    expect(tools.map((t: { name: string }) => t.name)).toEqual(
      expect.arrayContaining(['default', 'triage']),
    )
    const output = { severity: 'sev1', component: 'login', summary: 'Nobody can log in.' }
    const result = await inspector(
      '--method',
      'tools/call',
      '--tool-name',
      'triage',
      '--tool-arg',
      `task=finish with ${JSON.stringify(output)}`,
    )
    expect(result.structuredContent).toEqual(output)
  })
})

/** A raw POST to /mcp: what a client that is not the SDK's would send. */
function post(body: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(worker.url, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      ...headers,
    },
    body,
  })
}
const PING = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' })
const bearer = (token: string) => ({ Authorization: `Bearer ${token}` })

describe('/mcp version negotiation', () => {
  it.each([
    ['2025-11-25', '2025-11-25'],
    ['2025-06-18', '2025-06-18'],
    // A revision the SDK does not know yet is answered with the latest it knows.
    ['2026-07-28', '2025-11-25'],
  ])('initialize asking for %s is answered with %s', async (asked, answered) => {
    const res = await post(
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: asked,
          capabilities: {},
          clientInfo: { name: 'raw', version: '1.0.0' },
        },
      }),
      bearer(TOKENS.alpha),
    )
    expect(res.status).toBe(200)
    const text = await res.text()
    const data = /^data: (.+)$/m.exec(text)?.[1]
    expect(JSON.parse(data ?? 'null')).toMatchObject({
      result: { protocolVersion: answered, serverInfo: { name: 'edgeloop' } },
    })
  })
})

describe('/mcp refusals before the protocol, as the API answers them', () => {
  it('401 without a token or with a bad one, with the challenge (API tokens only: no PUBLIC_URL)', async () => {
    for (const headers of [{}, bearer('not-a-token')]) {
      const res = await post(PING, headers)
      expect(res.status).toBe(401)
      expect(res.headers.get('WWW-Authenticate')).toBe('Bearer realm="edgeloop"')
      expect(await res.json()).toMatchObject({
        error: { code: 'unauthorized', message: expect.any(String) },
      })
    }
  })

  it('403 for a token without runs:write, naming the scope', async () => {
    const res = await post(PING, bearer(TOKENS.reader))
    expect(res.status).toBe(403)
    expect(await res.json()).toMatchObject({
      error: {
        code: 'forbidden',
        message: expect.stringContaining('lacks the scope runs:write'),
        details: { required: ['runs:write'] },
      },
    })
  })

  it.each([
    ['https://evil.test', 403],
    ['http://localhost:6274', 403],
    ['null', 403],
  ])('a page of origin %s is refused (DNS rebinding)', async (origin, status) => {
    const res = await worker.runtime.fetch('/mcp', {
      method: 'POST',
      headers: {
        ...bearer(TOKENS.alpha),
        Origin: origin,
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
      },
      body: PING,
    })
    expect(res.status).toBe(status)
    expect(await res.json()).toMatchObject({ error: { code: 'origin_not_allowed' } })
  })

  it('a loopback page may call a Worker reached on loopback (wrangler dev)', async () => {
    const res = await post(PING, { ...bearer(TOKENS.alpha), Origin: 'http://localhost:6274' })
    expect(res.status).toBe(200)
  })

  it('CORS: a preflight and the answers carry Access-Control-Allow-Origin only for an allowed page', async () => {
    const preflight = (origin: string) =>
      fetch(worker.url, {
        method: 'OPTIONS',
        headers: {
          Origin: origin,
          'Access-Control-Request-Method': 'POST',
          'Access-Control-Request-Headers': 'authorization, content-type',
        },
      })
    const allowed = await preflight('http://localhost:6274')
    expect(allowed.status).toBe(204)
    expect(allowed.headers.get('Access-Control-Allow-Origin')).toBe('http://localhost:6274')
    expect(allowed.headers.get('Access-Control-Allow-Headers')).toContain('Authorization')
    const foreign = await preflight('https://evil.test')
    expect(foreign.status).toBe(204)
    expect(foreign.headers.get('Access-Control-Allow-Origin')).toBeNull()
    // The answers themselves, a refusal included, so the page can read why.
    const refused = await post(PING, { Origin: 'http://localhost:6274' })
    expect(refused.status).toBe(401)
    expect(refused.headers.get('Access-Control-Allow-Origin')).toBe('http://localhost:6274')
    expect(refused.headers.get('Access-Control-Expose-Headers')).toContain('WWW-Authenticate')
    expect(refused.headers.get('WWW-Authenticate')).toBe('Bearer realm="edgeloop"')
  })

  it('413 for a body over 64 KB, 400 for one nested too deep, before anything runs', async () => {
    const big = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'triage', arguments: { task: 'x'.repeat(70_000) } },
    })
    const large = await post(big, bearer(TOKENS.alpha))
    expect(large.status).toBe(413)
    expect(await large.json()).toMatchObject({ error: { code: 'body_too_large' } })
    const deep = `{"jsonrpc":"2.0","id":1,"method":"ping","params":${'['.repeat(200)}${']'.repeat(200)}}`
    const nested = await post(deep, bearer(TOKENS.alpha))
    expect(nested.status).toBe(400)
    expect(await nested.json()).toMatchObject({ error: { code: 'json_too_deep' } })
  })

  it('a body that is not JSON, or not JSON-RPC, is a JSON-RPC error from the SDK', async () => {
    const malformed = await post('{"jsonrpc": "2.0", "id": 1, "method": ', bearer(TOKENS.alpha))
    expect(malformed.status).toBe(400)
    expect(await malformed.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32700 } })
    const text = await post(PING, { ...bearer(TOKENS.alpha), 'Content-Type': 'text/plain' })
    expect(text.status).toBe(415)
    expect(await text.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 } })
  })

  it('an empty array (a batch of nothing) is -32600 Invalid Request, not an empty 202', async () => {
    const empty = await post('[ ]', bearer(TOKENS.alpha))
    expect(empty.status).toBe(400)
    const body = (await empty.json()) as { error: { code: number; message: string } }
    expect(body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } })
    expect(body.error.message).toMatch(/empty array/)
  })

  it('GET without Last-Event-ID (no standalone stream) is 405 with Allow: OPTIONS, POST', async () => {
    const res = await fetch(worker.url, {
      headers: { ...bearer(TOKENS.alpha), Accept: 'text/event-stream' },
    })
    expect(res.status).toBe(405)
    expect(res.headers.get('Allow')).toBe('OPTIONS, POST')
  })
})

describe('/mcp after a restart with other settings', () => {
  it('a task survives a kill of the Worker: approved after, answered once, its side effect run once', async () => {
    const client = await mcpClient(worker.url, TOKENS.alpha)
    const { task } = await callAsTask(client, 'default', { task: ROLLBACK })
    await until(client, task.taskId, 'input_required')
    await client.close()
    // SIGKILL: nothing the Worker held in memory survives; the run's object holds the task.
    await worker.restart({})
    await approveWhenAsked(task.taskId, TOKENS.alpha)
    const again = await mcpClient(worker.url, TOKENS.alpha)
    const result = await taskResult(again, task.taskId)
    expect(result.structuredContent).toEqual({ answer: 'Rolled back.' })
    const trace = await api(`/v1/runs/${task.taskId}/trace`, TOKENS.alpha)
    const calls = trace.steps.flatMap((s: { calls: { name: string }[] }) => s.calls)
    expect(calls.map((c: { name: string }) => c.name)).toEqual(['rollback_deploy'])
    await again.close()
  })

  it('a call past MCP_WAIT_SECONDS without a session names the task capability; a revoked token is refused mid-task', async () => {
    const beta = await mcpClient(worker.url, TOKENS.beta)
    const { task } = await callAsTask(beta, 'default', { task: ROLLBACK })
    await until(beta, task.taskId, 'input_required')
    await beta.close()

    // beta's token is taken out of API_TOKENS; calls wait at most a second.
    const tokens = JSON.parse((await mcpBindings()).API_TOKENS!) as { name: string }[]
    await worker.restart({
      MCP_WAIT_SECONDS: '1',
      API_TOKENS: JSON.stringify(tokens.filter((t) => t.name !== 'beta')),
    })
    const revoked = await post(
      JSON.stringify({
        jsonrpc: '2.0',
        id: 2,
        method: 'tasks/get',
        params: { taskId: task.taskId },
      }),
      bearer(TOKENS.beta),
    )
    expect(revoked.status).toBe(401)
    expect(JSON.stringify(await revoked.json())).not.toContain(task.taskId)

    // A client without a session (a stateless one) cannot resume a stream: it is told to use a task.
    const slow = await post(
      JSON.stringify({
        jsonrpc: '2.0',
        id: 3,
        method: 'tools/call',
        params: { name: 'default', arguments: { task: ROLLBACK } },
      }),
      { ...bearer(TOKENS.alpha), 'MCP-Protocol-Version': '2025-11-25' },
    )
    expect(await slow.text()).toMatch(
      /did not end within 1 s \(MCP_WAIT_SECONDS\); it goes on\. Call with a task \(params\.task/,
    )
  })
})
