/**
 * The Slack part of a simulated world: the Web API host on the simulated network (a strict fake,
 * which may also rate-limit), the mention that starts the run through the Worker's route, the
 * people who click the buttons of the cards Slack shows them, and the Slack invariants.
 */
import type { Env } from '../../../src/env'
import { parseButtonValue } from '../../../src/slack/approval-message'
import type { SimNamespace } from './host'
import type { ViolationKind } from './invariants'
import type { SimNetwork } from './network'
import type { PersonAction } from './scenarios'
import type { Sim } from './sim'
import {
  cardButton,
  checkSlack,
  checkSlackAtEnd,
  type SlackArrival,
  type SlackFacts,
} from './slack-invariants'
import { SimSlack, SLACK_HOST, slackUser } from './slack-sim'
import type { Decided } from './world'

type Json = Record<string, unknown>

/** The `ts` of the mention that starts the run: the thread every message of it goes to. */
const MENTION_TS = '1700000100.000100'

export class SlackPart {
  readonly slack: SimSlack
  readonly arrivals: SlackArrival[] = []
  readonly #runs = new Set<string>()
  readonly #cards = new Set<string>()
  readonly #facts: SlackFacts
  /** Broken Slack (self-check): it posts the first message it is sent twice, answering once. */
  postsTwice = false

  constructor(
    private readonly sim: Sim,
    private readonly net: SimNetwork,
    private readonly objects: SimNamespace,
    env: () => Env,
    private readonly people: PersonAction[],
    private readonly decisions: Decided[],
    fail: (kind: ViolationKind, detail: string) => void,
  ) {
    this.slack = new SimSlack(sim, env)
    net.on(SLACK_HOST, async (req) => {
      // Slack rate-limits now and then: nothing is posted, the outbox retries after Retry-After.
      if (sim.fault('slack', `Slack ${new URL(req.url).pathname} rate-limited`, 2, 0.05))
        return Response.json(
          { ok: false, error: 'ratelimited' },
          { status: 429, headers: { 'retry-after': '1' } },
        )
      if (this.postsTwice) {
        this.postsTwice = false
        sim.log('  BROKEN Slack posts this message twice')
        await this.slack.api.handler(req.clone())
        this.arrivals.push({ call: this.slack.api.calls.at(-1)!, causes: this.#causes() })
      }
      const res = await this.slack.api.handler(req)
      const call = this.slack.api.calls.at(-1)!
      this.arrivals.push({ call, causes: this.#causes() })
      return res
    })
    this.#facts = {
      arrivals: this.arrivals,
      runs: this.#runs,
      threads: new Set([MENTION_TS]),
      fail,
    }
  }

  /** Lost or late Slack answers and crashes of any run's object so far. */
  #causes(): number {
    let n = this.net.faultsByHost.get(SLACK_HOST) ?? 0
    for (const o of this.objects.objects.values()) n += o.crashes.length
    return n
  }

  /** Someone mentions the app with the task; Slack delivers it (and retries it) to the Worker. */
  start(task: string, onRun: (runId: string) => void): void {
    this.slack.mention('Ev0SIM00001', task, (runId) => {
      this.#runs.add(runId)
      onRun(runId)
    })
  }

  /** Requests sent before each deleted run's deletion was answered. */
  readonly #deletedAt = new Map<string, number>()

  /** The run's deletion was answered: from now on nothing may be sent to Slack for it. */
  deleted(runId: string): void {
    if (!this.#deletedAt.has(runId)) this.#deletedAt.set(runId, this.net.sent.length)
  }

  /** Nothing more is sent for a deleted run (docs/operations.md#deletion). */
  #afterDelete(): void {
    for (const [runId, from] of this.#deletedAt) {
      const late = this.net.sent
        .slice(from)
        .find((r) => r.host === SLACK_HOST && r.from.startsWith(`${runId}#`))
      if (late)
        this.#facts.fail(
          'slack_after_delete',
          `run ${runId} sent to Slack after its deletion was answered: ${late.body.slice(0, 120)}`,
        )
    }
  }

  /** People in Slack see each card as it is first posted and click its buttons. */
  afterTurn(): void {
    for (const a of this.arrivals) {
      if (a.call.method !== 'chat.postMessage' || (a.call.response as Json)?.ok !== true) continue
      const button = cardButton(a.call.body)
      if (!button) continue
      const v = parseButtonValue(button)
      if (!v.ok || this.#cards.has(`${v.value.runId}/${v.value.callId}`)) continue
      this.#cards.add(`${v.value.runId}/${v.value.callId}`)
      const ts = String((a.call.response as Json).ts)
      for (const p of this.people.filter((p) => p.inSlack)) {
        this.sim.schedule(
          `person ${p.by} clicks ${p.decision} in Slack on ${v.value.callId}`,
          p.afterMs ?? 100,
          () => this.#click(p, button, ts, 0),
          undefined,
          true,
        )
      }
    }
    checkSlack(this.#facts)
    this.#afterDelete()
  }

  #click(p: PersonAction, value: string, messageTs: string, k: number): void {
    const v = parseButtonValue(value)
    if (!v.ok) return
    const record: Decided = {
      runId: v.value.runId,
      callId: v.value.callId,
      by: slackUser(p.by),
      decision: p.decision,
      hash: v.value.argsHash,
      // Slack tells nobody they won (the card is updated); a refusal is an ephemeral note.
      ok: false,
      answered: false,
    }
    this.decisions.push(record)
    this.slack.click({ by: p.by, decision: p.decision, value, messageTs }, (status) => {
      record.answered = status !== 'failed'
      this.sim.log(`  Slack: ${p.by}'s click answered ${status}`)
      // No answer (an error page): the person clicks again a little later.
      if ((status === 'failed' || status >= 500) && k < 8)
        this.sim.schedule(
          `person ${p.by} clicks ${p.decision} in Slack again`,
          2_000,
          () => this.#click(p, value, messageTs, k + 1),
          undefined,
        )
    })
  }

  atEnd(): void {
    const live = [...this.#runs].filter((runId) => !this.#deletedAt.has(runId))
    const finished = live.map((runId) => {
      const o = this.objects.objects.get(runId)
      const rows = o?.storage.peek<{ status: string }>(
        "SELECT status FROM outbox WHERE kind = 'slack.final'",
      )
      return { runId, thread: MENTION_TS, finalGaveUp: rows?.[0]?.status === 'failed' }
    })
    checkSlackAtEnd(this.#facts, finished)
  }

  /** What the Slack pass prints: messages and clicks by kind. */
  figures(): Record<string, number> {
    const ok = this.arrivals.filter((a) => (a.call.response as Json)?.ok === true)
    const cards = ok.filter((a) => a.call.method === 'chat.postMessage' && cardButton(a.call.body))
    return {
      'Slack calls': this.arrivals.length,
      'cards posted': cards.length,
      'cards posted again (after a lost answer or crash)': cards.length - this.#cards.size,
      'updates (chat.update)': ok.filter((a) => a.call.method === 'chat.update').length,
      'ephemeral notes': ok.filter((a) => a.call.method === 'chat.postEphemeral').length,
      'Slack clicks': this.decisions.filter((d) => d.by.startsWith('USIM')).length,
      'event deliveries': this.slack.deliveries.length,
      'runs deleted': this.#deletedAt.size,
    }
  }
}
