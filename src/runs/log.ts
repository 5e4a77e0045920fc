import type { TransitionEvent } from '../kernel/transition'
import type { RunState } from '../kernel/state'

/**
 * One structured JSON line per transition (issue 3). Only ids, names, counts and timings:
 * never arguments, observations, prompts or anything that could hold a secret.
 */
export function logTransition(event: TransitionEvent, state: RunState): void {
  console.log(
    JSON.stringify({
      level: 'info',
      msg: 'transition',
      runId: event.runId,
      step: event.step ?? Math.max(0, state.steps.length - 1),
      phase: state.phase,
      action: event.action,
      ...(event.tool ? { tool: event.tool } : {}),
      ...(event.callId ? { callId: event.callId } : {}),
      ms: event.ms,
      ...(event.promptTokens !== null ? { promptTokens: event.promptTokens } : {}),
      ...(event.completionTokens !== null ? { completionTokens: event.completionTokens } : {}),
      ...(event.stopReason ? { stopReason: event.stopReason } : {}),
    }),
  )
}

/** A structured log line for a non-transition event (fields must be free of secrets). */
export function logEvent(msg: string, fields: Record<string, unknown>): void {
  console.log(JSON.stringify({ level: 'info', msg, ...fields }))
}
