/**
 * What a Slack-started run promises its thread (docs/slack-app.md, docs/architecture.md#slack),
 * checked on the calls the simulated Slack Web API took. Slack's `chat.postMessage` has no
 * idempotency key and edgeloop claims none for it: its messages are outbox deliveries, retried
 * until Slack answers. So a message may be posted again only when the run could not know the
 * first post happened: Slack's answer was lost or came after the client's timeout, or the run's
 * object crashed before it stored the answer. Every other repeat is a violation.
 */
import { parseButtonValue } from '../../../src/slack/approval-message'
import type { FakeSlackCall } from '../../fakes/fake-slack'
import type { SlackPersonViolation } from './slack-person-invariants'

export type SlackViolation =
  | 'duplicate_slack_message'
  | 'slack_unknown_run'
  | 'slack_missing'
  | 'slack_after_delete'
  | SlackPersonViolation

/** One call the Slack host took, with how many causes of a repeat had happened before it. */
export interface SlackArrival {
  call: FakeSlackCall
  /** Slack answers lost or late, and crashes of the run's object, so far. */
  causes: number
}

type Json = Record<string, unknown>

/** The value of an approval card's first button, or undefined for other messages. */
export function cardButton(body: Json | undefined): string | undefined {
  for (const block of (body?.blocks as { type: string; elements?: { value?: string }[] }[]) ?? [])
    if (block.type === 'actions') return block.elements?.find((e) => e.value)?.value
  return undefined
}

/** The run and call of an approval card, or undefined for other messages. */
function cardOf(body: Json | undefined): { runId: string; callId: string } | undefined {
  const v = parseButtonValue(cardButton(body) ?? '')
  return v.ok ? { runId: v.value.runId, callId: v.value.callId } : undefined
}

const isFinal = (text: string) =>
  /_Done in \d+ steps?\._$/.test(text) || text.startsWith(':x: Run failed')

export interface SlackFacts {
  arrivals: SlackArrival[]
  /** The Slack-started runs (by the Worker's answer to the mention) and their threads. */
  runs: Set<string>
  threads: Set<string>
  fail: (kind: SlackViolation, detail: string) => void
}

/**
 * After every turn: the started message and the final answer once per run, a card once per
 * approval, nothing for unknown runs.
 */
export function checkSlack({ arrivals, runs, threads, fail }: SlackFacts): void {
  const seen = new Map<string, SlackArrival[]>()
  const ok = arrivals.filter((a) => (a.call.response as Json | undefined)?.ok === true)
  for (const a of ok) {
    const body = a.call.body
    if (a.call.method !== 'chat.postMessage') continue
    const card = cardOf(body)
    const text = String(body?.text ?? '')
    if (card && !runs.has(card.runId))
      fail(
        'slack_unknown_run',
        `an approval card for run ${card.runId}, which nobody started from Slack`,
      )
    const thread = String(body?.thread_ts ?? '')
    if (!threads.has(thread))
      fail('slack_unknown_run', `a message in thread "${thread}", of no run: ${text.slice(0, 80)}`)
    const key = card
      ? `card ${card.runId}/${card.callId}`
      : isFinal(text)
        ? `final ${thread}`
        : text.startsWith(':hourglass_flowing_sand: Working on it')
          ? `started ${thread}`
          : ''
    if (!key) continue
    const earlier = seen.get(key) ?? []
    const last = earlier.at(-1)
    if (last && last.causes === a.causes)
      fail(
        'duplicate_slack_message',
        `${key} posted ${earlier.length + 1} times (ts ${[...earlier, a].map((e) => (e.call.response as Json).ts).join(', ')}), with no lost answer or crash in between`,
      )
    seen.set(key, [...earlier, a])
  }
}

/** Once settled: the final answer of every finished Slack run reached the thread, unless given up. */
export function checkSlackAtEnd(
  facts: SlackFacts,
  finished: { runId: string; thread: string; finalGaveUp: boolean }[],
): void {
  const posted = facts.arrivals.filter(
    (a) =>
      a.call.method === 'chat.postMessage' &&
      (a.call.response as Json | undefined)?.ok === true &&
      isFinal(String(a.call.body?.text ?? '')),
  )
  for (const r of finished) {
    if (r.finalGaveUp) continue
    if (!posted.some((a) => a.call.body?.thread_ts === r.thread))
      facts.fail('slack_missing', `run ${r.runId} finished but its answer never reached Slack`)
  }
}
