/**
 * A served call meets a person in Slack (docs/serving.md#people-stay-in-the-loop): an MCP client
 * calls an agent over `/mcp` on the Worker as deployed, the run's side effect waits for an
 * approval, the card is posted in the approvals channel (SLACK_APPROVALS_CHANNEL) of a strict
 * fake Slack Web API, an approver clicks Approve as Slack posts it (a signed `block_actions`
 * form), the side effect reaches the outside world once, and the client receives the
 * structured result.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import { APPROVE_ACTION_ID } from '../../src/slack/approval-message'
import {
  FakeSlack,
  messageClickBody,
  signedSlackRequest,
  type FakeSlackMessage,
} from '../fakes/fake-slack'
import { mcpClient, startMcpWorker, TOKENS, type McpWorker } from './serve-mcp/mcp-worker.ts'

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

/** The messages Slack accepted that name `runId` (its card's buttons carry it). */
const postedFor = (runId: string) =>
  slack.succeeded('chat.postMessage').filter((c) => JSON.stringify(c.body).includes(runId))
