/**
 * What Slack's modals and a question's buttons promise (docs/slack-app.md#modals,
 * docs/human-in-the-loop.md#edit-then-approve): an edit submitted in the _Edit, then approve_
 * modal makes the call run at most once, and with the edited arguments; an answer (a choice's
 * button, the _Answer the question_ modal) is applied at most once and never lost, whatever the
 * crashes, lost answers and repeated submissions in between. Judged from the committed state a
 * restarted object would load and the requests that reached the receiver.
 */
import { canonicalJson } from '../../../src/kernel/canonical'
import type { Call, RunState } from '../../../src/kernel/state'
import type { Arrival } from './network'

export type SlackPersonViolation =
  'slack_edit_lost' | 'slack_edit_twice' | 'slack_answer_lost' | 'slack_answer_twice'

/** One thing a person did in Slack on an item: an edit or an answer submitted, a button pressed. */
export interface SlackPersonAct {
  runId: string
  callId: string
  /** The person as the run records its decider: `slack:<user id>`. */
  by: string
  kind: 'edit' | 'answer' | 'decline'
  via: 'modal' | 'button'
  /** The edited arguments or the answer. */
  value: unknown
  /**
   * What the Worker answered: for a modal, `accepted` (200 with no body: Slack closes it, the
   * item was decided, or the same decision replayed), `refused` (the form replaced by why, or
   * errors under the fields); for a button, `answered` (200: decided, or told why not in a
   * private note); `failed` (no answer, or a 5xx); null until then.
   */
  outcome: 'accepted' | 'refused' | 'answered' | 'failed' | null
}

export interface SlackPersonFacts {
  acts: SlackPersonAct[]
  arrivals: readonly Arrival[]
  state: (runId: string) => RunState | undefined
  idempotent: boolean
  fail: (kind: SlackPersonViolation, detail: string) => void
}

const same = (a: unknown, b: unknown) => canonicalJson(a) === canonicalJson(b)

function callOf(state: RunState | undefined, callId: string): Call | undefined {
  return state?.steps.flatMap((s) => s.calls).find((c) => c.id === callId)
}

/** Answers as first committed, per `run/call`: a later commit must not change one. */
export class SlackPersonChecker {
  readonly #answers = new Map<string, string>()
  #effectsSeen = 0

  constructor(private readonly facts: SlackPersonFacts) {}

  /** After every turn: no answer replaced, no edited call sent with other arguments or twice. */
  afterTurn(runs: Iterable<string>): void {
    const { fail } = this.facts
    for (const runId of runs) {
      for (const call of this.facts.state(runId)?.steps.flatMap((s) => s.calls) ?? []) {
        const item = call.approval
        if (item?.kind !== 'question' || !item.decision) continue
        const key = `${runId}/${call.id}`
        const now = `${item.decision} by ${item.decidedBy}: ${canonicalJson(item.answer)}`
        const first = this.#answers.get(key)
        if (first === undefined) this.#answers.set(key, now)
        else if (first !== now) fail('slack_answer_twice', `${key}: ${first}, then ${now}`)
      }
    }
    this.#effects()
  }

  /** Each side effect of an edited call that reached the receiver: the edited arguments, once. */
  #effects(): void {
    const { arrivals, acts, fail } = this.facts
    for (; this.#effectsSeen < arrivals.length; this.#effectsSeen++) {
      const a = arrivals[this.#effectsSeen]!
      if (a.path !== '/effect') continue
      const key = a.headers['idempotency-key'] ?? ''
      const [runId = '', callId = ''] = key.split(':')
      const edits = acts.filter(
        (x) => x.kind === 'edit' && x.runId === runId && x.callId === callId,
      )
      if (!edits.length) continue
      const call = callOf(this.facts.state(runId), callId)
      const edit = call?.approval?.edit
      const body = JSON.parse(a.body) as unknown
      const sent = { url: `https://${a.host}${a.path}`, body }
      if (edit && !same(sent, call!.args))
        fail(
          'slack_edit_lost',
          `${runId}/${callId} was edited by ${edit.by} and ran with other arguments: ${a.body}`,
        )
      if (edit && !edits.some((x) => x.by === edit.by && same(x.value, call!.args)))
        fail('slack_edit_lost', `${runId}/${callId} ran with an edit nobody submitted: ${a.body}`)
      const keys = arrivals.filter(
        (b) =>
          b.path === '/effect' && b.headers['idempotency-key']?.startsWith(`${runId}:${callId}`),
      )
      const distinct = new Set(keys.map((b) => b.headers['idempotency-key']))
      if (distinct.size > 1 || (!this.facts.idempotent && keys.length > 1))
        fail(
          'slack_edit_twice',
          `${runId}/${callId}, edited in Slack, reached the receiver ${keys.length} times`,
        )
    }
  }

  /**
   * Once settled: each accepted submission is what the run recorded (the edit ran as submitted;
   * the answer is the call's), and an answer or decline Slack delivered left the question
   * decided by one of the people who acted on it in Slack.
   */
  atEnd(): void {
    const { acts, fail } = this.facts
    const accepted = acts.filter((x) => x.outcome === 'accepted')
    for (const x of accepted) {
      const key = `${x.runId}/${x.callId}`
      const call = callOf(this.facts.state(x.runId), x.callId)
      const item = call?.approval
      const wins = accepted.filter((y) => y.runId === x.runId && y.callId === x.callId)
      const others = new Set(wins.map((y) => `${y.by} ${canonicalJson(y.value)}`))
      if (others.size > 1)
        fail(
          x.kind === 'edit' ? 'slack_edit_twice' : 'slack_answer_twice',
          `${key}: ${[...others].join(' and ')} were each accepted`,
        )
      if (item?.decision !== 'approved' || item.decidedBy !== x.by) {
        fail(
          x.kind === 'edit' ? 'slack_edit_lost' : 'slack_answer_lost',
          `${key}: ${x.by}'s ${x.kind} was accepted, the run recorded ${item?.decision ?? 'nothing'} by ${item?.decidedBy ?? 'nobody'}`,
        )
        continue
      }
      if (x.kind === 'edit' && (!item.edit || !same(call!.args, x.value)))
        fail('slack_edit_lost', `${key}: the accepted edit is not the call's arguments`)
      if (x.kind === 'answer' && !same(item.answer, x.value))
        fail(
          'slack_answer_lost',
          `${key}: ${x.by} answered ${canonicalJson(x.value)}, the run recorded ${canonicalJson(item.answer)}`,
        )
    }
    this.#questionsDecided()
  }

  /** A question Slack delivered an answer or decline for ended decided by one who sent it. */
  #questionsDecided(): void {
    const { acts, fail } = this.facts
    const delivered = acts.filter(
      (x) => x.kind !== 'edit' && (x.outcome === 'accepted' || x.outcome === 'answered'),
    )
    for (const key of new Set(delivered.map((x) => `${x.runId}/${x.callId}`))) {
      const [runId = '', callId = ''] = key.split('/')
      const item = callOf(this.facts.state(runId), callId)?.approval
      const mine = acts.filter((x) => x.runId === runId && x.callId === callId)
      const by = mine.filter((x) => x.by === item?.decidedBy)
      if (!item?.decision || !by.length) {
        fail(
          'slack_answer_lost',
          `${key}: Slack delivered ${delivered.length} answers, the run recorded ${item?.decision ?? 'nothing'} by ${item?.decidedBy ?? 'nobody'}`,
        )
        continue
      }
      const answered = by.filter((x) => x.kind === 'answer')
      if (item.decision === 'approved' && !answered.some((x) => same(x.value, item.answer)))
        fail(
          'slack_answer_lost',
          `${key}: the run recorded the answer ${canonicalJson(item.answer)}, which ${item.decidedBy} never sent`,
        )
    }
  }
}
