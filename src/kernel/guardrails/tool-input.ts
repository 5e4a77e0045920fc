import { answeredCall } from '../calls'
import type { Call, RunState } from '../state'
import { isPromise, type SyncOrAsync } from '../sync-or-async'
import type { Slice } from '../transition'
import { screen, type Screened } from './screen'

/**
 * The tool-input guardrails on a step's reviewed calls, before anyone is asked to approve one (a
 * person never approves a call a guardrail would block): a rewrite replaces a call's arguments
 * (the approval's hash is of the new ones), a tripwire answers its call with a `[Guardrail]`
 * observation and every other unanswered call of the step as not run. Each screening is pushed
 * to `log`, which the caller records in the state (and ends the run on a tripwire).
 */
export function screenCalls(
  calls: Call[],
  stepIndex: number,
  state: RunState,
  slice: Slice,
  log: Screened[],
): SyncOrAsync<Call[]> {
  return screenFrom(0, calls.slice(), stepIndex, state, slice, log)
}

function screenFrom(
  first: number,
  calls: Call[],
  stepIndex: number,
  state: RunState,
  slice: Slice,
  log: Screened[],
): SyncOrAsync<Call[]> {
  for (let k = first; k < calls.length; k++) {
    const call = calls[k]!
    // Answered in review (loop guard, a failed check) or unusable (dispatch refuses it).
    if (call.status === 'done' || call.argsError) continue
    const where = { step: stepIndex, tool: call.name, callId: call.id }
    const screened = screen('toolInput', call.args, where, state, slice)
    if (isPromise(screened)) {
      return screened.then((s) =>
        took(calls, k, s, log) ? calls : screenFrom(k + 1, calls, stepIndex, state, slice, log),
      )
    }
    if (took(calls, k, screened, log)) return calls
  }
  return calls
}

/** Applies call `k`'s screening; true when it tripped (the step's other calls then never run). */
export function took(calls: Call[], k: number, s: Screened, log: Screened[]): boolean {
  log.push(s)
  const call = calls[k]!
  if (!s.tripped) {
    if (s.value !== call.args) {
      const args = s.value as Record<string, unknown>
      calls[k] = { ...call, args, rawArgs: call.rawArgs === null ? null : JSON.stringify(args) }
    }
    return false
  }
  const why = s.tripped.reason ?? 'no reason given'
  for (let j = 0; j < calls.length; j++) {
    const c = calls[j]!
    if (c.status === 'done') continue
    calls[j] =
      j === k
        ? answeredCall(
            c,
            'tool_error',
            `[Guardrail] ${c.name} was blocked by guardrail "${s.tripped.guardrail}": ${why}`,
          )
        : answeredCall(
            c,
            'tool_error',
            `[Guardrail] ${c.name} was not run: the run was stopped by a guardrail`,
          )
  }
  return true
}
