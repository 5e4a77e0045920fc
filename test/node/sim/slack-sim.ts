/**
 * Slack in the simulation (docs/slack-app.md): a person mentions the app in a channel, Slack
 * delivers the signed `app_mention` to the Worker's own `/slack/events` route (retrying it with
 * the same `event_id` when the answer does not come, as Slack does), the run's outbox posts to a
 * strict fake of the Slack Web API (test/fakes/fake-slack.ts) on the simulated network, and
 * people click the buttons of the approval cards Slack shows them: a signed `block_actions` to
 * `/slack/interactions`. The `SlackThread` objects (one per thread) keep their storage across the
 * schedule and are not crashed: the run's object is the one under test.
 */
import {
  blockActionsBody,
  eventCallbackBody,
  FakeSlack,
  signedSlackRequest,
  viewStateValues,
  viewSubmissionBody,
  type FakeSlackView,
} from '../../fakes/fake-slack'
import { APPROVE_ACTION_ID, DENY_ACTION_ID } from '../../../src/slack/approval-message'
import { SlackThread } from '../../../src/runs/slack-thread'
import worker from '../../../src/index'
import type { Env } from '../../../src/env'
import type { Sim } from './sim'

export const SLACK_HOST = 'slack.sim'
export const SLACK_SECRET = 'sim-slack-signing-secret'
export const SLACK_TOKEN = 'xoxb-sim-token'
export const SLACK_CHANNEL = 'CSIMOPS01'
const TEAM = 'T0001'
const REQUESTER = 'USIMREQ01'
/** A person's Slack user id (all of them are approvers; the requester is not). */
export const slackUser = (by: string) => `USIM${by.toUpperCase()}`
/** Whom the run records a person's decisions in Slack under (docs/human-in-the-loop.md). */
export const slackDecider = (by: string) => `slack:${slackUser(by)}`

/** The Slack settings a Slack-started schedule's Worker runs with. */
export function slackEnv(people: string[]): Record<string, string> {
  return {
    SLACK_SIGNING_SECRET: SLACK_SECRET,
    SLACK_BOT_TOKEN: SLACK_TOKEN,
    SLACK_API_URL: `https://${SLACK_HOST}/api`,
    SLACK_APPROVERS: people.map(slackUser).join(','),
    // People decide through the API as well as in Slack.
    API_APPROVES_SLACK_RUNS: 'true',
  }
}

/** `SLACK_THREADS`: the real `SlackThread` class over a key-value storage that lasts. */
export class SimSlackThreads {
  readonly #stores = new Map<string, Map<string, unknown>>()
  constructor(private readonly env: () => Env) {}

  idFromName(name: string): { name: string; toString(): string } {
    return { name, toString: () => name }
  }

  get(id: { name: string }): unknown {
    let store = this.#stores.get(id.name)
    if (!store) this.#stores.set(id.name, (store = new Map()))
    const s = store
    const storage = {
      get: async (k: string) => structuredClone(s.get(k)),
      put: async (k: string | Record<string, unknown>, v?: unknown) => {
        if (typeof k === 'string') s.set(k, structuredClone(v))
        else for (const [key, value] of Object.entries(k)) s.set(key, structuredClone(value))
      },
      delete: async (k: string) => s.delete(k),
    }
    return new SlackThread({ storage } as never, this.env() as never)
  }
}

export interface SlackClick {
  by: string
  decision: 'approve' | 'deny'
  value: string
  messageTs: string
}

/** Slack's side: the Web API fake, the events it delivers to the Worker, the clicks it forwards. */
export class SimSlack {
  readonly api = new FakeSlack({ token: SLACK_TOKEN, channels: [SLACK_CHANNEL] })
  /** Broken Slack (self-check): a submitted modal carries its prefilled values, not what was typed. */
  dropsEdits = false
  /** Event deliveries Slack made (first and retries). */
  readonly deliveries: { eventId: string; retry: number; status: number | 'failed' }[] = []

  constructor(
    private readonly sim: Sim,
    private readonly env: () => Env,
  ) {}

  /** A request to the Worker, as Slack sends it: signed now with the signing secret. */
  async #post(path: string, body: string, headers: Record<string, string> = {}) {
    const req = await signedSlackRequest({
      url: `https://edgeloop.sim${path}`,
      secret: SLACK_SECRET,
      body,
      timestamp: Math.floor(Date.now() / 1000),
      headers,
    })
    const ctx = { waitUntil: () => {}, passThroughOnException: () => {}, props: {} }
    return worker.fetch(req as never, this.env(), ctx as never)
  }

  /**
   * Delivers the mention; Slack retries an event whose answer failed or did not come (up to 3
   * retries, `X-Slack-Retry-Num`, the same `event_id`). `repeat`: Slack repeats it although the
   * Worker answered (its answer took longer than Slack waits).
   */
  mention(
    eventId: string,
    text: string,
    onRun: (runId: string) => void,
    retry = 0,
    repeat = false,
  ): void {
    const body = eventCallbackBody({
      text: `<@UFAKEBOT> ${text}`,
      user: REQUESTER,
      channel: SLACK_CHANNEL,
      ts: '1700000100.000100',
      event_id: eventId,
    })
    const label = `Slack delivers app_mention ${eventId}${retry ? ` (retry ${retry})` : ''}`
    this.sim.schedule(
      label,
      retry ? [0, 1_000, 60_000, 300_000][retry]! : 0,
      () => {
        this.#post('/slack/events', body, retry ? { 'x-slack-retry-num': String(retry) } : {})
          .then(async (res) => {
            this.deliveries.push({ eventId, retry, status: res.status })
            const out = (await res.json().catch(() => ({}))) as { runId?: string | null }
            this.sim.log(`  Slack: event ${eventId} answered ${res.status} run ${out.runId}`)
            if (res.ok && out.runId) onRun(out.runId)
            if (!res.ok && retry < 3) this.mention(eventId, text, onRun, retry + 1)
            else if (res.ok && retry < 3 && !repeat) {
              // Slack waited 3 s and gave up on an answer that came: it delivers again.
              if (this.sim.fault('slack', `Slack repeats event ${eventId}`, 2, 0.1))
                this.mention(eventId, text, onRun, retry + 1, true)
            }
          })
          .catch((err: Error) => {
            this.deliveries.push({ eventId, retry, status: 'failed' })
            this.sim.log(`  Slack: event ${eventId} got no answer: ${err.message}`)
            if (retry < 3) this.mention(eventId, text, onRun, retry + 1)
          })
      },
      undefined,
    )
  }

  /** A person's click on a card's Approve or Deny, as Slack posts the `block_actions`. */
  click(c: SlackClick, after: (status: number | 'failed') => void): void {
    const actionId = c.decision === 'approve' ? APPROVE_ACTION_ID : DENY_ACTION_ID
    this.press({ by: c.by, actionId, value: c.value, messageTs: c.messageTs }, after)
  }

  #triggers = 0

  /**
   * A click on any button of a card (a choice, Decline, Edit, Answer): the `block_actions` with a
   * `trigger_id` of its own, which a modal may be opened with once; returns that trigger.
   */
  press(
    c: { by: string; actionId: string; value: string; messageTs: string },
    after: (status: number | 'failed') => void,
  ): string {
    const trigger = `${++this.#triggers}.738474920.${(0xa000 + this.#triggers).toString(16)}`
    const body = blockActionsBody({
      action_id: c.actionId,
      value: c.value,
      user_id: slackUser(c.by),
      username: c.by,
      channel_id: SLACK_CHANNEL,
      team_id: TEAM,
      message_ts: c.messageTs,
      trigger_id: trigger,
    })
    this.#post('/slack/interactions', body).then(
      (res) => after(res.status),
      () => after('failed'),
    )
    return trigger
  }

  /**
   * A person submits a modal Slack shows them (`view_submission`), with `typed` in its inputs
   * (by block id; the rest as prefilled). The answer: its status and body (empty: accepted).
   */
  submit(
    c: { by: string; modal: FakeSlackView; typed: Record<string, string> },
    after: (answer: { status: number; body: string } | 'failed') => void,
  ): void {
    if (this.dropsEdits) this.sim.log('  BROKEN Slack submits the modal as it was prefilled')
    const body = viewSubmissionBody({
      view: c.modal,
      values: viewStateValues(c.modal.view, this.dropsEdits ? {} : c.typed),
      user_id: slackUser(c.by),
      team_id: TEAM,
    })
    this.#post('/slack/interactions', body).then(
      async (res) => after({ status: res.status, body: await res.text() }),
      () => after('failed'),
    )
  }
}
