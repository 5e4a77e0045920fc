import { describeThrown } from '../describe-thrown'
import type { ModelUsage } from '../model'
import { stepCost } from '../reply-cost'
import type { RunState, Usage } from '../state'
import { isPromise, type SyncOrAsync } from '../sync-or-async'
import { cancelMessage, stop, type Slice } from '../transition'
import { updateState } from '../update-state'
import {
  DEFAULT_GUARDRAIL_TIMEOUT_MS,
  type Guardrail,
  type GuardrailContext,
  type GuardrailPoint,
  type GuardrailRecord,
  type GuardrailVerdict,
} from './guardrail'

/** What a screened value belongs to. */
export interface Where {
  step: number | null
  tool: string | null
  callId: string | null
}

/** A value after a point's guardrails: what goes on, every verdict, and the tripwire if any. */
export interface Screened {
  value: unknown
  records: GuardrailRecord[]
  tripped: GuardrailRecord | null
}

/**
 * Runs `point`'s guardrails on `value`, in order: each sees the value the one before let through
 * (a rewrite's replacement), and the first tripwire ends the screening. Answers at once when every
 * check did; a promise only when one waited.
 */
export function screen(
  point: GuardrailPoint,
  value: unknown,
  where: Where,
  state: RunState,
  slice: Slice,
): SyncOrAsync<Screened> {
  const out: Screened = { value, records: [], tripped: null }
  return screenFrom(0, slice.guardrails[point], point, where, state, slice, out)
}

function screenFrom(
  first: number,
  list: readonly Guardrail[],
  point: GuardrailPoint,
  where: Where,
  state: RunState,
  slice: Slice,
  out: Screened,
): SyncOrAsync<Screened> {
  for (let k = first; k < list.length; k++) {
    const judged = judge(list[k]!, point, out.value, where, state, slice)
    if (isPromise(judged)) {
      return judged.then((record) => {
        if (take(out, record)) return out
        return screenFrom(k + 1, list, point, where, state, slice, out)
      })
    }
    if (take(out, judged)) return out
  }
  return out
}

/** Adds one verdict to `out`; true when it tripped (nothing after it runs). */
function take(out: Screened, judged: Judged): boolean {
  out.records.push(judged.record)
  if (judged.record.verdict === 'rewrite') out.value = judged.value
  if (judged.record.verdict !== 'tripwire') return false
  out.tripped = judged.record
  return true
}

interface Judged {
  record: GuardrailRecord
  value: unknown
}

/** One guardrail's verdict on `value`, a failure turned into a verdict by its `onError`. */
function judge(
  guardrail: Guardrail,
  point: GuardrailPoint,
  value: unknown,
  where: Where,
  state: RunState,
  slice: Slice,
): SyncOrAsync<Judged> {
  const started = slice.now()
  const controller = new AbortController()
  const charged: ModelUsage = { promptTokens: 0, completionTokens: 0 }
  let judgedByModel = false
  const ctx: GuardrailContext = {
    runId: state.id,
    agent: state.agent.name,
    point,
    step: where.step,
    tool: where.tool,
    callId: where.callId,
    signal: controller.signal,
    charge(usage) {
      judgedByModel = true
      charged.promptTokens += usage.promptTokens
      charged.completionTokens += usage.completionTokens
    },
  }
  const finish = (verdict: unknown, thrown: unknown): Judged => {
    const usage = judgedByModel ? charged : null
    return recordOf(guardrail, point, value, where, verdict, thrown, usage, started, slice)
  }
  let answer: GuardrailVerdict | Promise<GuardrailVerdict>
  try {
    answer = guardrail.check(value, ctx)
  } catch (err) {
    return finish(undefined, err ?? new Error('the check threw'))
  }
  // A promise of another library's making (any thenable) is waited for like a native one.
  const thenable = typeof (answer as { then?: unknown } | null)?.then === 'function'
  if (!thenable) return finish(answer, undefined)
  return withinTime(Promise.resolve(answer), guardrail, controller, slice).then(
    (verdict) => finish(verdict, undefined),
    (err: unknown) => finish(undefined, err ?? new Error('the check rejected')),
  )
}

/**
 * `pending`, or a rejection when the guardrail's time is up or the run is cancelled (also a check
 * that ignores its signal stops being waited for then).
 */
async function withinTime<T>(
  pending: Promise<T>,
  guardrail: Guardrail,
  controller: AbortController,
  slice: Slice,
): Promise<T> {
  const ms = guardrail.timeoutMs ?? DEFAULT_GUARDRAIL_TIMEOUT_MS
  const runSignal = slice.deps.signal
  const onRunAbort = () => controller.abort(runSignal?.reason ?? new Error('the run was cancelled'))
  runSignal?.addEventListener('abort', onRunAbort, { once: true })
  const timer = setTimeout(
    () => controller.abort(new Error(`guardrail "${guardrail.name}" timed out after ${ms}ms`)),
    ms,
  )
  const stopped = new Promise<never>((_, reject) => {
    const signal = controller.signal
    if (signal.aborted) reject(signal.reason)
    else signal.addEventListener('abort', () => reject(signal.reason), { once: true })
  })
  if (runSignal?.aborted) onRunAbort()
  try {
    return await Promise.race([pending, stopped])
  } finally {
    clearTimeout(timer)
    runSignal?.removeEventListener('abort', onRunAbort)
  }
}

function recordOf(
  guardrail: Guardrail,
  point: GuardrailPoint,
  value: unknown,
  where: Where,
  answer: unknown,
  thrown: unknown,
  usage: ModelUsage | null,
  started: number,
  slice: Slice,
): Judged {
  const problem =
    thrown !== undefined ? describeThrown(thrown) : verdictProblem(answer, point, value)
  const pricing = slice.deps.pricing
  const record: GuardrailRecord = {
    guardrail: guardrail.name,
    point,
    verdict: 'pass',
    reason: null,
    error: null,
    step: where.step,
    tool: where.tool,
    callId: where.callId,
    ms: Math.max(0, slice.now() - started),
    at: started,
    promptTokens: usage?.promptTokens ?? null,
    completionTokens: usage?.completionTokens ?? null,
    costUsd:
      usage && pricing ? stepCost(pricing, usage.promptTokens, 0, usage.completionTokens) : null,
  }
  if (problem !== null) {
    record.error = slice.redact(problem)
    if ((guardrail.onError ?? 'trip') === 'trip') {
      record.verdict = 'tripwire'
      record.reason = `the check failed (${record.error})`
    }
    return { record, value }
  }
  const verdict = answer as GuardrailVerdict
  record.verdict = verdict.verdict
  if (verdict.verdict === 'tripwire') record.reason = slice.redact(verdict.reason)
  if (verdict.verdict === 'rewrite') {
    record.reason = verdict.reason ? slice.redact(verdict.reason) : null
    return { record, value: verdict.value }
  }
  return { record, value }
}

/** Why `answer` is no verdict for `point` (null: it is one). */
function verdictProblem(answer: unknown, point: GuardrailPoint, value: unknown): string | null {
  const v = answer as Partial<Record<string, unknown>> | null
  if (!v || typeof v !== 'object') return 'the check gave no verdict object'
  if (v.verdict === 'pass') return null
  if (v.verdict === 'tripwire') {
    return typeof v.reason === 'string' && v.reason.trim()
      ? null
      : 'a tripwire needs a non-empty "reason"'
  }
  if (v.verdict !== 'rewrite') return `unknown verdict ${JSON.stringify(v.verdict)}`
  if (v.reason !== undefined && typeof v.reason !== 'string')
    return 'a rewrite\'s "reason" must be a string'
  const replacement = v.value
  if (point === 'toolInput') {
    return isRecord(replacement) ? null : 'a tool input rewrite must be an object of arguments'
  }
  if (typeof value === 'string') {
    return typeof replacement === 'string' ? null : `a rewrite at ${point} must be a string`
  }
  return replacement === undefined ? 'a rewrite needs a "value"' : null
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return !!value && typeof value === 'object' && !Array.isArray(value)
}

/**
 * `state` with screenings recorded: their verdicts appended, and a model-judged check's usage
 * counted as model calls (so the token and cost budgets see it).
 */
export function withScreened(state: RunState, screenings: readonly Screened[]): RunState {
  const records = screenings.flatMap((s) => s.records)
  if (!records.length) return state
  let usage: Usage = state.usage
  for (const r of records) {
    if (r.promptTokens === null) continue
    usage = {
      ...usage,
      promptTokens: usage.promptTokens + r.promptTokens,
      completionTokens: usage.completionTokens + (r.completionTokens ?? 0),
      costUsd:
        r.costUsd === null && usage.costUsd === null
          ? null
          : (usage.costUsd ?? 0) + (r.costUsd ?? 0),
      modelCalls: usage.modelCalls + 1,
    }
  }
  return updateState(state, { guardrails: state.guardrails.concat(records), usage })
}

/** The first tripwire of `screenings`, if any. */
export function trippedOf(screenings: readonly Screened[]): GuardrailRecord | null {
  for (const s of screenings) if (s.tripped) return s.tripped
  return null
}

/**
 * Ends the run for tripwire `r`: `guardrail`, with which, where and why; `cancelled` when the run
 * was cancelled while the check ran (the check was cut off by the cancel, not by its verdict).
 */
export function stopTripped(state: RunState, r: GuardrailRecord, slice: Slice): RunState {
  if (slice.deps.signal?.aborted) {
    return stop(state, 'cancelled', slice, cancelMessage(state, slice))
  }
  return stop(state, 'guardrail', slice, trippedMessage(r))
}

/** The run's error for a tripwire: which guardrail, where, why. */
export function trippedMessage(r: GuardrailRecord): string {
  const at = r.tool ? `${r.point} of ${r.tool} (call ${r.callId})` : r.point
  return `guardrail "${r.guardrail}" tripped at ${at}: ${r.reason ?? 'no reason given'}`
}
