/**
 * The Slack part of a simulated world: the Web API host on the simulated network (a strict fake,
 * which may also rate-limit), the mention that starts the run through the Worker's route, the
 * people who click the buttons of the cards Slack shows them, and the Slack invariants.
 */
import type { Env } from '../../../src/env'
import type { RunState } from '../../../src/kernel/state'
import { EDIT_ACTION_ID, parseButtonValue } from '../../../src/slack/approval-message'
import { JSON_BLOCK_ID, TEXT_BLOCK_ID } from '../../../src/slack/modal-fields'
import {
  ANSWER_ACTION_PREFIX,
  ANSWER_MODAL_ACTION_ID,
  DECLINE_QUESTION_ACTION_ID,
} from '../../../src/slack/question-message'
import type { FakeSlackView } from '../../fakes/fake-slack'
import { hashOf } from './invariants'
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
import { SlackPersonChecker, type SlackPersonAct } from './slack-person-invariants'
import { SimSlack, SLACK_HOST, slackDecider, slackUser } from './slack-sim'
import type { Decided } from './world'

type Json = Record<string, unknown>
type Button = { action_id: string; value: string }

/** Every button of a card (its actions block), or none for other messages. */
function buttonsOf(body: Json | undefined): Button[] {
  const blocks = (body?.blocks as { type: string; elements?: Partial<Button>[] }[]) ?? []
  return blocks
    .filter((b) => b.type === 'actions')
    .flatMap((b) => b.elements ?? [])
    .filter((e): e is Button => typeof e.action_id === 'string' && typeof e.value === 'string')
}

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
  /** What people did in Slack's modals and on questions' buttons, with the Worker's answers. */
  readonly acts: SlackPersonAct[] = []
  readonly #personChecker: SlackPersonChecker

  constructor(
    private readonly sim: Sim,
    private readonly net: SimNetwork,
    private readonly objects: SimNamespace,
    env: () => Env,
    private readonly people: PersonAction[],
    private readonly decisions: Decided[],
    fail: (kind: ViolationKind, detail: string) => void,
    state: (runId: string) => RunState | undefined,
    idempotent: boolean,
  ) {
    this.slack = new SimSlack(sim, env)
    this.#personChecker = new SlackPersonChecker({
      acts: this.acts,
      arrivals: net.arrivals,
      state,
      idempotent,
      fail,
    })
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
      const buttons = buttonsOf(a.call.body)
      for (const p of this.people.filter((p) => p.inSlack)) {
        this.sim.schedule(
          `person ${p.by} clicks ${p.decision} in Slack on ${v.value.callId}`,
          p.afterMs ?? 100,
          () => this.#act(p, buttons, button, ts),
          undefined,
          true,
        )
      }
    }
    checkSlack(this.#facts)
    this.#personChecker.afterTurn(this.#runs)
    this.#afterDelete()
  }

  /**
   * What a person does with a card: on a question, the choice's button or the Answer modal (or
   * Decline); on an approval they edit, the Edit modal; else Approve or Deny.
   */
  #act(p: PersonAction, buttons: Button[], first: string, ts: string): void {
    const find = (id: string) => buttons.find((b) => b.action_id === id)
    const decline = find(DECLINE_QUESTION_ACTION_ID)
    if (decline) {
      if (p.decision === 'deny') return this.#press(p, decline, 'decline', undefined, ts, 0)
      const choice = buttons.find(
        (b) =>
          b.action_id.startsWith(ANSWER_ACTION_PREFIX) &&
          (JSON.parse(b.value) as { a?: string }).a === p.answer,
      )
      if (choice) return this.#press(p, choice, 'answer', p.answer, ts, 0)
      const modal = find(ANSWER_MODAL_ACTION_ID)
      if (modal) return this.#openModal(p, modal, 'answer', ts, 0)
    }
    const edit = find(EDIT_ACTION_ID)
    if (edit && p.edit && p.decision === 'approve') return this.#openModal(p, edit, 'edit', ts, 0)
    this.#click(p, first, ts, 0)
  }

  /** A question's button (a choice, Decline), pressed again while the Worker gives no answer. */
  #press(
    p: PersonAction,
    b: Button,
    kind: 'answer' | 'decline',
    answer: unknown,
    ts: string,
    k: number,
  ): void {
    const { r: runId, c: callId } = JSON.parse(b.value) as { r: string; c: string }
    const act: SlackPersonAct = {
      runId,
      callId,
      by: slackDecider(p.by),
      kind,
      via: 'button',
      value: answer ?? null,
      outcome: null,
    }
    this.acts.push(act)
    this.slack.press(
      { by: p.by, actionId: b.action_id, value: b.value, messageTs: ts },
      (status) => {
        act.outcome = status === 'failed' || status >= 500 ? 'failed' : 'answered'
        this.sim.log(`  Slack: ${p.by}'s ${kind} answered ${status}`)
        if (act.outcome === 'failed' && k < 8)
          this.sim.schedule(
            `person ${p.by} presses ${kind} in Slack again`,
            2_000,
            () => this.#press(p, b, kind, answer, ts, k + 1),
            undefined,
          )
      },
    )
  }

  /**
   * Edit or Answer: the click opens a modal (views.open with its trigger); the person fills it in
   * and submits. No modal (no answer, Slack rate-limited views.open): they click again.
   */
  #openModal(p: PersonAction, b: Button, kind: 'edit' | 'answer', ts: string, k: number): void {
    const notes = () => this.slack.api.ephemerals().filter((e) => e.user === slackUser(p.by)).length
    const before = notes()
    const trigger = this.slack.press(
      { by: p.by, actionId: b.action_id, value: b.value, messageTs: ts },
      (status) => {
        const modal = this.slack.api.modals.find((m) => m.triggerId === trigger)
        this.sim.log(
          `  Slack: ${p.by}'s ${kind} click answered ${status}, modal ${modal?.id ?? 'none'}`,
        )
        if (!modal) {
          // Told privately why not (decided meanwhile): nothing to open. Else they click again.
          if (notes() === before && k < 3)
            this.sim.schedule(
              `person ${p.by} clicks ${kind} in Slack again`,
              2_000,
              () => this.#openModal(p, b, kind, ts, k + 1),
              undefined,
            )
          return
        }
        const submit = (n: number) => () => this.#submit(p, modal, kind, n)
        this.sim.schedule(`person ${p.by} submits the ${kind} modal`, 500, submit(0), undefined)
        // A double click on the submit button: Slack posts the submission twice.
        if (p.submitsTwice)
          this.sim.schedule(
            `person ${p.by} submits the ${kind} modal again`,
            500,
            submit(1),
            undefined,
          )
      },
    )
  }

  #submit(p: PersonAction, modal: FakeSlackView, kind: 'edit' | 'answer', k: number): void {
    const item = JSON.parse(String(modal.view.private_metadata)) as {
      r: string
      c: string
      h: string
    }
    const value = kind === 'edit' ? p.edit : p.answer
    const typed: Record<string, string> =
      kind === 'edit'
        ? { [JSON_BLOCK_ID]: JSON.stringify(p.edit) }
        : { [TEXT_BLOCK_ID]: String(p.answer) }
    const by = slackDecider(p.by)
    const act: SlackPersonAct = {
      runId: item.r,
      callId: item.c,
      by,
      kind,
      via: 'modal',
      value,
      outcome: null,
    }
    this.acts.push(act)
    // The decision the approval check matches the side effect with (its edited hash).
    const decided: Decided = {
      runId: item.r,
      callId: item.c,
      by,
      decision: 'approve',
      hash: item.h,
      ...(kind === 'edit' ? { editHash: hashOf('http_post', p.edit!) } : {}),
      ok: false,
      answered: false,
    }
    this.decisions.push(decided)
    this.slack.submit({ by: p.by, modal, typed }, (answer) => {
      decided.answered = answer !== 'failed'
      act.outcome =
        answer === 'failed' || answer.status >= 500
          ? 'failed'
          : answer.status === 200 && answer.body === ''
            ? 'accepted'
            : 'refused'
      this.sim.log(
        `  Slack: ${p.by}'s ${kind} submission ${act.outcome}${answer === 'failed' ? '' : ` ${answer.status} ${answer.body.slice(0, 160)}`}`,
      )
      // Slack shows that the app did not answer; the person submits again.
      if (act.outcome === 'failed' && k < 8)
        this.sim.schedule(
          `person ${p.by} submits the ${kind} modal again`,
          2_000,
          () => this.#submit(p, modal, kind, k + 2),
          undefined,
        )
    })
  }

  #click(p: PersonAction, value: string, messageTs: string, k: number): void {
    const v = parseButtonValue(value)
    if (!v.ok) return
    const record: Decided = {
      runId: v.value.runId,
      callId: v.value.callId,
      by: slackDecider(p.by),
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
    this.#personChecker.atEnd()
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
      'Slack clicks': this.decisions.filter((d) => d.by.startsWith('slack:')).length,
      'event deliveries': this.slack.deliveries.length,
      'runs deleted': this.#deletedAt.size,
      'modals opened': this.slack.api.modals.length,
      'edits accepted': this.acts.filter((x) => x.kind === 'edit' && x.outcome === 'accepted')
        .length,
      'answers accepted (modal)': this.acts.filter(
        (x) => x.kind === 'answer' && x.via === 'modal' && x.outcome === 'accepted',
      ).length,
      'answers pressed (buttons)': this.acts.filter(
        (x) => x.kind === 'answer' && x.via === 'button' && x.outcome === 'answered',
      ).length,
      'submissions refused': this.acts.filter((x) => x.outcome === 'refused').length,
    }
  }
}
