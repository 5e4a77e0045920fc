/**
 * What must hold after any run, however often and wherever its runtime was killed.
 * Judged from outside only: the run's trace and view from the API, every request the Worker
 * sent (FakeNetwork), the kills, and what the API showed before each kill. A request the Worker
 * sent proves that every transition before it was durable (Durable Object output gates hold
 * outgoing requests and responses until the writes before them are stored).
 */
import type { FakeReply } from '../../fakes/fake-openai'
import type { RunResult } from '../../../src/kernel/trace'
import type { RunView } from '../../../src/runs/types'
import type { NetworkRequest } from '../fake-network'
import { MODEL_HOST, RECEIVER_HOST, type Kill, type Observation } from './crash-session'
import type { StreamedEvent } from './event-stream'
import { modelStepOf } from './step-model'

export type ViolationKind =
  | 'stuck_run'
  | 'implicit_result'
  | 'lost_step'
  | 'duplicate_step'
  | 'duplicate_side_effect'
  | 'unknown_not_reported'
  | 'spurious_unknown'
  | 'model_asked_twice'
  | 'usage_miscount'
  | 'callback'
  | 'event_stream'
  | 'protocol'

export interface Violation {
  kind: ViolationKind
  detail: string
}

export interface RunEvidence {
  runId: string
  task: string
  /** The run's tag: in its task and in the paths of its read-only calls. */
  tag: string
  /** The model's replies by step (what an undisturbed run records, step for step). */
  script: FakeReply[]
  /** Whether the server declares http_post idempotent (HTTP_POST_IDEMPOTENT). */
  idempotentPost: boolean
  /** The final view; undefined when the run never finished by itself. */
  view: RunView | undefined
  result: RunResult | undefined
  requests: NetworkRequest[]
  kills: Kill[]
  observations: Observation[]
  /** Model-call violations the fake provider saw (wire format). */
  modelViolations?: string[]
  /** The run's events as `GET /v1/runs/:id/events` streamed them, in order. */
  events?: StreamedEvent[]
  callback?: boolean
}

/** Every invariant the run breaks; empty when it kept them all. */
export function checkRun(run: RunEvidence): Violation[] {
  const out: Violation[] = []
  const fail = (kind: ViolationKind, detail: string) => out.push({ kind, detail })
  if (!run.view || !run.result || run.result.phase !== 'done') {
    fail('stuck_run', `run ${run.runId} did not finish by itself (phase ${run.view?.phase})`)
    return out
  }
  const result = run.result
  checkResult(result, fail)
  checkSteps(run, result, fail)
  checkModelCalls(run, result, fail)
  checkSideEffects(run, result, fail)
  if (run.callback) checkCallback(run, fail)
  if (run.events) checkEvents(run.events, fail)
  for (const v of run.modelViolations ?? []) fail('protocol', `model request: ${v}`)
  return out
}

type Fail = (kind: ViolationKind, detail: string) => void

/** The run ended with an explicit result: a reason, and an answer exactly when it succeeded. */
function checkResult(result: RunResult, fail: Fail) {
  if (!result.stopReason) fail('implicit_result', 'done without a stop reason')
  if (result.ok && (result.stopReason !== 'finish' || !result.answer)) {
    fail(
      'implicit_result',
      `ok with stop reason ${result.stopReason} and answer "${result.answer}"`,
    )
  }
  if (!result.ok && result.answer !== '') fail('implicit_result', 'failed with a non-empty answer')
}

/** Steps 0…n-1, each the model's reply for that step, none twice, none missing at a finish. */
function checkSteps(run: RunEvidence, result: RunResult, fail: Fail) {
  const indexes = result.steps.map((s) => s.i)
  const expected = indexes.map((_, k) => k)
  if (new Set(indexes).size !== indexes.length) {
    fail('duplicate_step', `step indexes ${indexes.join(',')}`)
  } else if (indexes.join() !== expected.join()) {
    fail('lost_step', `step indexes ${indexes.join(',')}`)
  }
  const ids = result.steps.flatMap((s) => s.calls.map((c) => c.id))
  if (new Set(ids).size !== ids.length) fail('duplicate_step', `call ids ${ids.join(',')}`)
  result.steps.forEach((step, k) => {
    const scripted = scriptedCallIds(run.script[k])
    const got = step.calls.map((c) => c.id)
    if (scripted.join() !== got.join()) {
      fail('lost_step', `step ${k} has calls [${got}], the model's reply for it had [${scripted}]`)
    }
  })
  if (result.stopReason === 'finish' && result.steps.length !== run.script.length) {
    fail('lost_step', `finished with ${result.steps.length} of ${run.script.length} steps`)
  }
}

function scriptedCallIds(reply: FakeReply | undefined): string[] {
  if (reply?.kind !== 'tool_calls') return []
  return reply.calls.map((c) => c.id ?? '?')
}

/**
 * The model was asked once per stored step; again only when a kill came after the earlier ask
 * and before anything proved that step stored (a later request of the run, or the API showing
 * the step). Usage counts every model call made, those whose answers a crash lost included.
 */
function checkModelCalls(run: RunEvidence, result: RunResult, fail: Fail) {
  const asks = run.requests
    .filter((r) => r.host === MODEL_HOST)
    .map((r) => ({ r, ...modelStepOf(r.body) }))
    .filter((a) => a.task.includes(`[${run.tag}]`))
  const mine = runRequests(run)
  for (let j = 0; j < asks.length; j++) {
    const again = asks[j]!
    const before = asks.slice(0, j).filter((a) => a.step === again.step)
    if (!before.length) continue
    const prev = before.at(-1)!.r
    // The runtime that sent the earlier ask died if a later one sent this ask. Generations, not
    // request counts, say so: a request can be in flight (sent, its body still being read) while
    // the kill counts the requests recorded so far.
    const kill = run.kills.find(
      (k) => k.generation >= prev.generation && k.generation < again.r.generation,
    )
    if (!kill) {
      fail('model_asked_twice', `step ${again.step} asked again with no crash in between`)
      continue
    }
    const laterRequest = mine.some((r) => r.n > prev.n && r.generation === prev.generation)
    const shown = run.observations.some(
      (o) => o.generation === kill.generation && o.stepCount > again.step,
    )
    if (laterRequest || shown) {
      fail('model_asked_twice', `step ${again.step} was stored before the crash and asked again`)
    }
  }
  const stored = result.steps.length
  const unstored = asks.filter((a) => a.step >= stored)
  if (
    unstored.some((a) => a.step > stored) ||
    (unstored.length && result.stopReason === 'finish')
  ) {
    fail('lost_step', `the model answered step ${unstored.at(-1)!.step}, the trace has ${stored}`)
  }
  const { modelCalls } = result.usage
  // Every call made is counted, those whose answers a crash lost included (the "model call
  // started" record written before each call). A kill between that record and the request
  // leaving may count a call the provider never saw: at most one per kill.
  if (modelCalls < asks.length || modelCalls > asks.length + run.kills.length) {
    fail('usage_miscount', `usage.modelCalls ${modelCalls} for ${asks.length} model requests`)
  }
  for (let k = 0; k < stored; k++) {
    if (!asks.some((a) => a.step === k)) fail('lost_step', `step ${k} was never asked for`)
  }
}

/** The run's requests to the receiver (side effects, read-only calls, callbacks). */
function runRequests(run: RunEvidence): NetworkRequest[] {
  return run.requests.filter(
    (r) =>
      (r.host === MODEL_HOST && modelStepOf(r.body).task.includes(`[${run.tag}]`)) ||
      (r.host === RECEIVER_HOST &&
        ((r.headers['idempotency-key'] ?? '').startsWith(`${run.runId}:`) ||
          r.headers['x-edgeloop-run-id'] === run.runId ||
          r.path.includes(run.tag))),
  )
}

/**
 * Each side effect reached the receiver at most once (or, when idempotent, only under its own
 * key and with the same body); one interrupted by a kill is reported `outcome unknown`; none is
 * reported unknown without a kill; none is left `started` in a finished run.
 */
function checkSideEffects(run: RunEvidence, result: RunResult, fail: Fail) {
  const effects = run.requests.filter(
    (r) => r.host === RECEIVER_HOST && r.method === 'POST' && r.path !== '/callback',
  )
  const calls = result.steps.flatMap((s) => s.calls).filter((c) => c.name === 'http_post')
  const prefix = `${run.runId}:`
  for (const e of effects) {
    const key = e.headers['idempotency-key'] ?? ''
    if (key.startsWith(prefix) && !calls.some((c) => `${prefix}${c.id}` === key)) {
      fail('lost_step', `side effect ${key} reached the receiver but no call in the trace made it`)
    }
  }
  const lastKill = run.kills.at(-1)
  for (const call of calls) {
    const attempts = effects.filter((e) => e.headers['idempotency-key'] === `${prefix}${call.id}`)
    const hits = attempts.filter((a) => a.delivered)
    if (!run.idempotentPost && hits.length > 1) {
      fail('duplicate_side_effect', `${call.id} reached the receiver ${hits.length} times`)
    }
    if (new Set(attempts.map((a) => a.body)).size > 1) {
      fail('duplicate_side_effect', `${call.id} was sent with different bodies under one key`)
    }
    // A cancel leaves calls that never ran as they were (denied, awaiting…); only a `started`
    // one may have happened and must be reported.
    if (call.status === 'started') {
      fail('unknown_not_reported', `${call.id} left started in a finished run`)
      continue
    }
    const interrupted = attempts.some((a) => !a.answered)
    if (!run.idempotentPost && interrupted && call.kind !== 'outcome_unknown') {
      fail('unknown_not_reported', `${call.id} was cut off by a crash but reported ${call.kind}`)
    }
    const killedAfter =
      lastKill !== undefined && attempts.every((a) => a.n < lastKill.afterRequests)
    if (call.kind === 'outcome_unknown' && (!lastKill || !killedAfter)) {
      fail('spurious_unknown', `${call.id} reported outcome unknown with no crash after it`)
    }
  }
}

/**
 * The callback was delivered, every attempt with the same delivery id and body; a second
 * delivered attempt only when a kill came after the first.
 */
function checkCallback(run: RunEvidence, fail: Fail) {
  const sent = run.requests.filter(
    (r) => r.path === '/callback' && r.headers['x-edgeloop-run-id'] === run.runId,
  )
  const entry = run.view?.deliveries.find((d) => d.kind === 'callback')
  if (entry?.status !== 'delivered') fail('callback', `callback ${entry?.status ?? 'never queued'}`)
  if (new Set(sent.map((r) => r.headers['x-edgeloop-delivery'])).size > 1) {
    fail('callback', 'callback attempts carry different delivery ids')
  }
  if (new Set(sent.map((r) => r.body)).size > 1) fail('callback', 'callback bodies differ')
  const answered = sent.filter((r) => r.answered)
  if (answered.length > 1 && !run.kills.some((k) => k.afterRequests > answered[0]!.n)) {
    fail('callback', `callback delivered ${answered.length} times with no crash in between`)
  }
}

/** Event ids run 1, 2, 3… with no gap and no repeat, and the stream ends with the finish. */
function checkEvents(events: StreamedEvent[], fail: Fail) {
  const numbers = events.map((e) => Number(e.id))
  for (let k = 0; k < numbers.length; k++) {
    if (numbers[k] !== k + 1) {
      fail('event_stream', `event ${k + 1} of the stream has id ${numbers[k]}`)
      return
    }
  }
  if (events.at(-1)?.type !== 'run_finished') {
    fail(
      'event_stream',
      `the stream ends with ${events.at(-1)?.type ?? 'nothing'}, not run_finished`,
    )
  }
  // Each fact is told once: one reply per step, one start and one finish per call, one end.
  const told = new Set<string>()
  for (const e of events) {
    if (!['model_replied', 'call_started', 'call_finished', 'run_finished'].includes(e.type))
      continue
    const fact = `${e.type} ${e.data.step ?? ''} ${e.data.callId ?? ''}`
    if (told.has(fact)) fail('event_stream', `${fact.trim()} streamed twice`)
    told.add(fact)
  }
}
