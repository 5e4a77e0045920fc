/**
 * The Worker as Slack sees it: signed inbound requests through `exports.default.fetch`, a strict
 * fake Slack Web API on slack.test, a fake OpenAI-compatible model on api.openai.test, and a
 * receiver for side effects on receiver.test. Nothing else may be reached.
 *
 * Time: `Date.now` (what the routes, the run and the outbox read) runs an hour ahead of the real
 * clock, so the runtime never fires a run's alarm on its own; the test runs every alarm that is
 * due by that clock with `settle()`, and moves the clock with `advance()` (retries, expiry).
 */
import { exports, env as workerEnv } from 'cloudflare:workers'
import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test'
import { expect, vi } from 'vitest'
import { APPROVE_ACTION_ID, DENY_ACTION_ID } from '../../src/slack/approval-message'
import type { Env } from '../../src/env'
import type { RunView } from '../../src/runs/types'
import { FakeOpenAI } from '../fakes/fake-openai'
import {
  FakeSlack,
  eventCallbackBody,
  messageClickBody,
  messageEventBody,
  signedSlackRequest,
  slashCommandBody,
  type FakeSlackMessage,
} from '../fakes/fake-slack'
import { Outbound, type RecordedRequest } from '../fakes/outbound'
import { verifyFakes } from '../fakes/verify-fakes'

export const SIGNING_SECRET = 'test-signing-secret'
export const BOT_TOKEN = 'xoxb-test-token'
export const BASE = 'https://edgeloop.test'
export const CHANNEL = 'C2147483705'
/** The slash command's and mention's default user: not an approver. */
export const REQUESTER = 'U2147483697'
export const APPROVER = 'UAPPROVER1'
export const APPROVER_2 = 'UAPPROVER2'
export const RECEIVER_HOST = 'receiver.test'

// The project declares no `Cloudflare.Env` / `GlobalProps`, so type the bindings here.
const env = workerEnv as unknown as Env
const worker = (exports as unknown as { default: Fetcher }).default

const CLOCK_LEAD_MS = 60 * 60_000
let unique = 0

/** A fresh id per request so every test starts its own run (runs outlive a test). */
export function uniqueId(prefix: string): string {
  return `${prefix}${Date.now().toString(36)}${(++unique).toString(36)}`
}

let tsCounter = 0
/** A fresh message ts (threads outlive a test, so each test uses its own). */
export function messageTs(): string {
  return `17${String(Date.now()).slice(-8)}.${String(++tsCounter).padStart(6, '0')}`
}

/** A conversation id of its own, Slack-shaped (`D…` a DM, `G…` a group DM): runs outlive a test. */
export function uniqueConversation(kind: 'D' | 'G'): string {
  return `${kind}${uniqueId('')
    .toUpperCase()
    .replace(/[^A-Z0-9]/g, '')}`
}

export class SlackWorld {
  readonly slack = new FakeSlack({ token: BOT_TOKEN })
  readonly model = new FakeOpenAI()
  /** Requests the side-effecting tool sent to receiver.test. */
  readonly received: RecordedRequest[] = []
  readonly outbound: Outbound
  /** How far the Worker's clock moves while the model answers a request. */
  modelLatencyMs = 0
  /**
   * A streamed model reply arrives one SSE event at a time: each after `realMs`, moving the
   * Worker's clock by `clockMs` (a model that writes for a while). Undefined: all at once.
   */
  modelWrites: { realMs: number; clockMs: number } | undefined
  /** Called as the model receives its nth request (from 1), before it answers. */
  onModelRequest: ((n: number) => void) | undefined
  #modelRequests = 0
  #offset = CLOCK_LEAD_MS
  readonly #clock: { mockRestore(): void }

  constructor() {
    const realNow = Date.now.bind(Date)
    this.#clock = vi.spyOn(Date, 'now').mockImplementation(() => realNow() + this.#offset)
    this.outbound = new Outbound()
      .on('slack.test', this.slack.handler)
      .on('api.openai.test', async (req) => {
        // The model "takes" modelLatencyMs of the Worker's clock to answer.
        this.advance(this.modelLatencyMs)
        this.onModelRequest?.(++this.#modelRequests)
        return this.#slowly(await this.model.handler(req))
      })
      .on(RECEIVER_HOST, async (req) => {
        this.received.push({
          method: req.method,
          url: req.url,
          headers: Object.fromEntries(req.headers),
          body: await req.text(),
        })
        return Response.json({ ok: true, rollback: 'queued' }, { status: 201 })
      })
      .install()
  }

  /** Restores fetch and the clock; fails the test on any unexpected or refused request. */
  restore(): void {
    this.#clock.mockRestore()
    verifyFakes(this.outbound, this.model)
    expect(this.slack.unknownMethods, 'Slack methods the fake does not speak').toEqual([])
  }

  /** The response as it is, or, with `modelWrites`, its SSE events one by one over time. */
  #slowly(res: Response): Response {
    const pace = this.modelWrites
    const sse = res.headers.get('content-type')?.startsWith('text/event-stream')
    if (!pace || !sse || !res.body) return res
    const body = res.body
    const encoder = new TextEncoder()
    const stream = new ReadableStream<Uint8Array>({
      start: async (controller) => {
        const text = await new Response(body).text()
        for (const event of text.split(/(?<=\n\n)/)) {
          await new Promise((resolve) => setTimeout(resolve, pace.realMs))
          this.advance(pace.clockMs)
          controller.enqueue(encoder.encode(event))
        }
        controller.close()
      },
    })
    return new Response(stream, { status: res.status, headers: res.headers })
  }

  /** Moves the Worker's clock forward (what waiting would do). */
  advance(ms: number): void {
    this.#offset += ms
  }

  /** A Slack request signed now with the real signing secret (or as `sign` overrides). */
  async post(
    path: string,
    body: string,
    options: { timestamp?: number; secret?: string; headers?: Record<string, string> } = {},
  ): Promise<Response> {
    const req = await signedSlackRequest({
      url: `${BASE}${path}`,
      secret: options.secret ?? SIGNING_SECRET,
      body,
      timestamp: options.timestamp ?? Math.floor(Date.now() / 1000),
      ...(options.headers ? { headers: options.headers } : {}),
    })
    return worker.fetch(req)
  }

  /** A POST to a Slack route with exactly these headers (for forged or broken signatures). */
  async postRaw(path: string, body: string, headers: Record<string, string>): Promise<Response> {
    const json = body.trimStart().startsWith('{')
    return worker.fetch(`${BASE}${path}`, {
      method: 'POST',
      headers: {
        'content-type': json ? 'application/json' : 'application/x-www-form-urlencoded',
        ...headers,
      },
      body,
    })
  }

  /** Runs `/edgeloop <task>` and returns the ack and the run id it names. */
  async command(task: string, fields: Record<string, string> = {}) {
    const res = await this.post(
      '/slack/commands',
      slashCommandBody({ text: task, trigger_id: uniqueId('13345224609.'), ...fields }),
    )
    expect(res.status).toBe(200)
    const ack = (await res.json()) as { response_type: string; text: string }
    const runId = /run_[0-9a-f]{32}/.exec(ack.text)?.[0]
    if (!runId) throw new Error(`slash command ack names no run: ${ack.text}`)
    return { ack, runId }
  }

  /** Sends an `app_mention` event callback (a retry when `retryNum` is given). */
  async mention(input: Parameters<typeof eventCallbackBody>[0], retryNum?: number) {
    const headers: Record<string, string> =
      retryNum === undefined
        ? {}
        : { 'x-slack-retry-num': String(retryNum), 'x-slack-retry-reason': 'http_timeout' }
    const res = await this.post('/slack/events', eventCallbackBody(input), { headers })
    expect(res.status).toBe(200)
    return (await res.json()) as SlackEventAck
  }

  /** Sends a `message` event callback (a DM, a thread reply, an edit, a bot post…). */
  async message(input: Parameters<typeof messageEventBody>[0], retryNum?: number) {
    const headers: Record<string, string> =
      retryNum === undefined
        ? {}
        : { 'x-slack-retry-num': String(retryNum), 'x-slack-retry-reason': 'http_timeout' }
    const res = await this.post('/slack/events', messageEventBody(input), { headers })
    expect(res.status).toBe(200)
    return (await res.json()) as SlackEventAck
  }

  /** Clicks a button of a posted approval message, as Slack posts the `block_actions`. */
  async click(
    message: FakeSlackMessage,
    action: 'approve' | 'deny',
    userId: string,
    /** Where the click seems to come from (a copied button elsewhere); default the message's. */
    from: { teamId?: string; channel?: string } = {},
  ) {
    const actionId = action === 'approve' ? APPROVE_ACTION_ID : DENY_ACTION_ID
    const triggerId = uniqueId('13345224609.')
    return this.post(
      '/slack/interactions',
      messageClickBody({ message, actionId, userId, triggerId, from }),
    )
  }

  /** Runs every alarm of the run that is due by the Worker's clock; returns how many ran. */
  async settle(runId: string, maxAlarms = 25): Promise<number> {
    const stub = env.RUNS.get(env.RUNS.idFromName(runId))
    for (let ran = 0; ran < maxAlarms; ran++) {
      const at = await runInDurableObject(stub, (_run, state) => state.storage.getAlarm())
      if (at === null || at > Date.now()) return ran
      await runDurableObjectAlarm(stub)
    }
    throw new Error(`run ${runId} still had a due alarm after ${maxAlarms} alarms`)
  }

  /** Moves the clock to the run's next alarm (a retry, an expiry) and settles; false if none. */
  async nextAlarm(runId: string): Promise<boolean> {
    const stub = env.RUNS.get(env.RUNS.idFromName(runId))
    const at = await runInDurableObject(stub, (_run, state) => state.storage.getAlarm())
    if (at === null) return false
    if (at > Date.now()) this.advance(at - Date.now())
    await this.settle(runId)
    return true
  }

  /** Drives the run's alarms (moving the clock) until no delivery is pending. */
  async deliverAll(runId: string, maxAlarms = 40): Promise<RunView> {
    for (let i = 0; i < maxAlarms; i++) {
      const view = await this.view(runId)
      if (!view.deliveries.some((d) => d.status === 'pending')) return view
      await this.nextAlarm(runId)
    }
    throw new Error(`run ${runId} still has pending deliveries after ${maxAlarms} alarms`)
  }

  /** `GET /v1/runs/:id` with the API token, as sent back. */
  async getRun(runId: string): Promise<Response> {
    return worker.fetch(`${BASE}/v1/runs/${runId}`, {
      headers: { authorization: 'Bearer test-token' },
    })
  }

  /** The run as `GET /v1/runs/:id` shows it. */
  async view(runId: string): Promise<RunView> {
    const res = await this.getRun(runId)
    expect(res.status).toBe(200)
    return (await res.json()) as RunView
  }

  /** The channel's messages, oldest first. */
  messages(channel = CHANNEL): FakeSlackMessage[] {
    return this.slack.messages(channel)
  }

  /** The one approval message (with buttons), as a client showing it now sees it. */
  approvalMessage(channel = CHANNEL): FakeSlackMessage {
    const found = this.messages(channel).filter((m) => m.text?.startsWith('Approval needed'))
    expect(found).toHaveLength(1)
    // A copy: the client keeps showing these buttons even after chat.update replaces them.
    return structuredClone(found[0]!)
  }
}

/** What /slack/events answers: the run started (or found), or why nothing started. */
export interface SlackEventAck {
  ok: boolean
  runId: string | null
  created: boolean
  continues?: string | null
  ignored?: string
  busy?: string
}

export { buttonsOf, type PostedButton } from '../fakes/fake-slack'

/** All mrkdwn / plain text of a message's blocks, joined. */
export function blockText(message: FakeSlackMessage): string {
  const texts: string[] = []
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(walk)
    if (!node || typeof node !== 'object') return
    const o = node as Record<string, unknown>
    if ((o.type === 'mrkdwn' || o.type === 'plain_text') && typeof o.text === 'string')
      texts.push(o.text)
    Object.values(o).forEach(walk)
  }
  walk(message.blocks)
  return texts.join('\n')
}
