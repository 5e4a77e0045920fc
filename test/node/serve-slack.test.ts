/**
 * A served call meets a person in Slack (docs/serving.md#people-stay-in-the-loop): an MCP client
 * calls an agent over `/mcp` on the Worker as deployed, the run's side effect waits for an
 * approval, the card is posted in the approvals channel (SLACK_APPROVALS_CHANNEL) of a strict
 * fake Slack Web API, an approver clicks Approve as Slack posts it (a signed `block_actions`
 * form), the side effect reaches the outside world once, and the client receives the
 * structured result. The same with A2A's client (`input-required`, then completed), and the
 * per-token limit on calls waiting at once (SERVED_CALLS_PER_TOKEN), shared by both.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TaskState, type StreamResponse, type Task } from '@a2a-js/sdk'
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import { APPROVE_ACTION_ID } from '../../src/slack/approval-message'
import {
  FakeSlack,
  messageClickBody,
  signedSlackRequest,
  type FakeSlackMessage,
} from '../fakes/fake-slack'
import { mcpClient, startMcpWorker, TOKENS, type McpWorker } from './serve-mcp/mcp-worker.ts'
import { a2aClient, a2aMessage } from './a2a-client.ts'

const SLACK_TOKEN = 'xoxb-served-approvals'
const SIGNING_SECRET = 'served-approvals-signing-secret'
const APPROVALS = 'C0SERVEDOPS'
const APPROVER = 'UAPPROVER1'
const OUTSIDER = 'UOUTSIDER1'
const RECEIVER = 'receiver.test'

const slack = new FakeSlack({ token: SLACK_TOKEN, channels: [APPROVALS] })
/** Each side effect's request body, as the receiver got it. */
const received: unknown[] = []
let worker: McpWorker

async function outbound(request: Request): Promise<Response> {
  const host = new URL(request.url).host
  if (host === 'slack.test') return slack.handler(request)
  if (host === RECEIVER) {
    received.push(await request.json())
    return Response.json({ deployed: true }, { status: 201 })
  }
  return new Response(`no network in this test: ${request.url}`, { status: 502 })
}

beforeAll(async () => {
  worker = await startMcpWorker(
    {
      ENABLED_TOOLS: 'calculator,http_post',
      HTTP_ALLOWLIST: RECEIVER,
      SLACK_BOT_TOKEN: SLACK_TOKEN,
      SLACK_SIGNING_SECRET: SIGNING_SECRET,
      SLACK_APPROVERS: APPROVER,
      SLACK_API_URL: 'https://slack.test/api',
      SLACK_APPROVALS_CHANNEL: APPROVALS,
      // One waiting call per token, so a second one shows the limit.
      SERVED_CALLS_PER_TOKEN: '1',
    },
    outbound,
  )
}, 120_000)
afterAll(() => worker?.stop())

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** The approval card of `runId` in the approvals channel, once the run's outbox posted it. */
async function cardOf(runId: string): Promise<FakeSlackMessage> {
  for (let i = 0; i < 300; i++) {
    const card = slack
      .messages(APPROVALS)
      .find(
        (m) => m.text?.startsWith('Approval needed') && JSON.stringify(m.blocks).includes(runId),
      )
    // A copy: Slack's client keeps showing these buttons after chat.update replaces them.
    if (card) return structuredClone(card)
    await sleep(100)
  }
  throw new Error(`no approval card for ${runId} in ${APPROVALS}`)
}

/** `userId` clicks Approve on `card`, as Slack posts the click to /slack/interactions. */
async function clickApprove(card: FakeSlackMessage, userId: string): Promise<Response> {
  const body = messageClickBody({
    message: card,
    actionId: APPROVE_ACTION_ID,
    userId,
    triggerId: `13345224609.${crypto.randomUUID()}`,
  })
  const url = new URL('/slack/interactions', await worker.runtime.url()).href
  const timestamp = Math.floor(Date.now() / 1000)
  return fetch(await signedSlackRequest({ url, secret: SIGNING_SECRET, body, timestamp }))
}

async function api(path: string): Promise<any> {
  const res = await worker.runtime.fetch(path, {
    headers: { Authorization: `Bearer ${TOKENS.alpha}` },
  })
  expect(res.status, path).toBe(200)
  return res.json()
}

describe('an MCP call whose run waits for a Slack approval', () => {
  it('posts the card in the approvals channel, is approved there, and answers the client', async () => {
    const client = await mcpClient(worker.url, TOKENS.alpha)
    const logs: string[] = []
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      logs.push(String((n.params.data as { message: string }).message))
    })
    const body = { service: 'order', version: 'v2.13.2' }
    const task = `call \`http_post\` with ${JSON.stringify({ url: `https://${RECEIVER}/deploys`, body })}, then finish with Deployed.`
    const call = client.callTool({ name: 'default', arguments: { task } }, undefined, {
      timeout: 60_000,
    })
    for (let i = 0; i < 100 && !logs.length; i++) await sleep(50)
    const runId = /run (run_[0-9a-f]{32})/.exec(logs[0] ?? '')?.[1]
    expect(runId, logs.join('\n')).toBeDefined()

    const card = await cardOf(runId!)
    // A run not started from Slack has no thread there: the card stands alone in the channel,
    // naming the agent, the tool and its exact arguments.
    expect(card.thread_ts).toBeUndefined()
    const shown = JSON.stringify(card.blocks)
    expect(shown).toContain('http_post')
    expect(shown).toContain('v2.13.2')
    expect(received).toEqual([])

    // Someone who is not an approver is told so privately; nothing is decided.
    expect((await clickApprove(card, OUTSIDER)).status).toBe(200)
    expect(slack.ephemerals(APPROVALS).at(-1)).toMatchObject({
      user: OUTSIDER,
      text: expect.stringContaining('SLACK_APPROVERS'),
    })
    expect((await api(`/v1/runs/${runId}`)).pendingApprovals).toHaveLength(1)

    expect((await clickApprove(card, APPROVER)).status).toBe(200)
    const result = await call
    expect(result.isError).toBeFalsy()
    expect(result.structuredContent).toEqual({ answer: 'Deployed.' })

    // A second click (a double click, Slack's retry) decides nothing more and runs nothing.
    expect((await clickApprove(card, APPROVER)).status).toBe(200)
    expect(slack.ephemerals(APPROVALS).at(-1)).toMatchObject({
      user: APPROVER,
      text: expect.stringContaining('Already decided'),
    })
    expect(received).toEqual([body])

    const view = await api(`/v1/runs/${runId}`)
    expect(view).toMatchObject({
      status: 'succeeded',
      requestedBy: 'alpha',
      slack: { channel: APPROVALS },
    })
    const calls = view.result.steps.flatMap((s: { calls: unknown[] }) => s.calls)
    expect(calls).toMatchObject([
      {
        name: 'http_post',
        status: 'done',
        approval: { decision: 'approved', decidedBy: `slack:${APPROVER}` },
      },
    ])
    // The card's buttons are replaced by who decided; nothing else of the run is posted there.
    for (let i = 0; i < 100 && !slack.updatesOf(card.ts).length; i++) await sleep(100)
    expect(slack.updatesOf(card.ts)).toHaveLength(1)
    expect(postedFor(runId!)).toHaveLength(1)
    await client.close()
  })
})

/** A task that posts `body` to the receiver once approved, then answers `answer`. */
const postTask = (body: Record<string, unknown>, answer: string) =>
  `call \`http_post\` with ${JSON.stringify({ url: `https://${RECEIVER}/deploys`, body })}, then finish with ${answer}`

/** The run's id from the first log message of an MCP call. */
async function runIdFrom(logs: string[]): Promise<string> {
  for (let i = 0; i < 100 && !logs.length; i++) await sleep(50)
  const runId = /run (run_[0-9a-f]{32})/.exec(logs[0] ?? '')?.[1]
  if (!runId) throw new Error(`no run id in the log messages: ${logs.join('; ')}`)
  return runId
}

describe('an A2A message whose run waits for a Slack approval', () => {
  it('streams to input-required, is approved in Slack, and the task completes', async () => {
    const client = await a2aClient(String(await worker.runtime.url()), TOKENS.alpha)
    const body = { service: 'billing', version: 'v7.1.0' }
    const events: StreamResponse[] = []
    for await (const e of client.sendMessageStream(a2aMessage(postTask(body, 'Deployed.')))) {
      events.push(e)
    }
    const last = events.at(-1)!.payload!
    expect(last.$case === 'statusUpdate' && last.value.status?.state).toBe(
      TaskState.TASK_STATE_INPUT_REQUIRED,
    )
    const id = (events[0]!.payload!.value as Task).id
    const card = await cardOf(id)
    expect(received).not.toContainEqual(body)
    expect((await clickApprove(card, APPROVER)).status).toBe(200)
    let task = await client.getTask({ tenant: '', id, historyLength: 0 })
    for (let i = 0; i < 200 && task.status?.state !== TaskState.TASK_STATE_COMPLETED; i++) {
      await sleep(50)
      task = await client.getTask({ tenant: '', id, historyLength: 0 })
    }
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED)
    expect(task.artifacts[0]!.parts[0]!.content).toEqual({ $case: 'text', value: 'Deployed.' })
    expect(received.filter((r) => JSON.stringify(r) === JSON.stringify(body))).toHaveLength(1)
  })
})

describe('calls one token has waiting at once (SERVED_CALLS_PER_TOKEN)', () => {
  it('a call beyond the limit is refused, naming it, and starts nothing; the place frees', async () => {
    const first = await mcpClient(worker.url, TOKENS.alpha)
    const logs: string[] = []
    first.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      logs.push(String((n.params.data as { message: string }).message))
    })
    const body = { service: 'search', version: 'v3.0.1' }
    const waiting = first.callTool(
      { name: 'default', arguments: { task: postTask(body, 'Deployed.') } },
      undefined,
      { timeout: 60_000 },
    )
    const runId = await runIdFrom(logs)
    const card = await cardOf(runId)

    // The same token, over MCP without a task: a JSON-RPC error that names the setting.
    const second = await mcpClient(worker.url, TOKENS.alpha)
    const refusedTask = `finish with refused-${crypto.randomUUID()}`
    const refused = await second
      .callTool({ name: 'default', arguments: { task: refusedTask } })
      .then(
        () => null,
        (err: Error & { code?: number; data?: unknown }) => err,
      )
    expect(refused?.message).toContain('SERVED_CALLS_PER_TOKEN = 1')
    expect(refused).toMatchObject({
      code: -32600,
      data: { code: 'too_many_waiting_calls', setting: 'SERVED_CALLS_PER_TOKEN', limit: 1 },
    })
    // …and over A2A, a message that would wait: the same limit, the same words.
    const a2a = await a2aClient(String(await worker.runtime.url()), TOKENS.alpha)
    await expect(a2a.sendMessage(a2aMessage(refusedTask))).rejects.toThrow(
      /SERVED_CALLS_PER_TOKEN = 1/,
    )
    // Another token is counted apart; a call as a task waits on no request and is not counted.
    const beta = await mcpClient(worker.url, TOKENS.beta)
    const done = await beta.callTool({ name: 'default', arguments: { task: 'finish with Beta.' } })
    expect(done.structuredContent).toEqual({ answer: 'Beta.' })

    expect((await clickApprove(card, APPROVER)).status).toBe(200)
    expect((await waiting).structuredContent).toEqual({ answer: 'Deployed.' })
    // The place is free again once the call has ended.
    const again = await second.callTool({
      name: 'default',
      arguments: { task: 'finish with Again.' },
    })
    expect(again.structuredContent).toEqual({ answer: 'Again.' })
    // Nothing was started by the refused calls: the token's runs, as the index lists them.
    let listed: { task: string }[] = []
    for (let i = 0; i < 100; i++) {
      listed = (await api('/v1/runs?limit=100')).items
      if (listed.some((r) => r.task === 'finish with Again.')) break
      await sleep(100)
    }
    expect(listed.map((r) => r.task)).toContain('finish with Again.')
    expect(listed.map((r) => r.task)).not.toContain(refusedTask)
    await Promise.all([first.close(), second.close(), beta.close()])
  })
})

/** The messages Slack accepted that name `runId` (its card's buttons carry it). */
const postedFor = (runId: string) =>
  slack.succeeded('chat.postMessage').filter((c) => JSON.stringify(c.body).includes(runId))
