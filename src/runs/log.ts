import type { TransitionEvent } from '../kernel/transition'
import type { RunState } from '../kernel/state'
import { logs, type LogLevel } from '../config/log-level'
import { redactDeep } from '../security/redact'

/** What the log functions read from the Worker's env. */
export interface LogEnv {
  LOG_LEVEL?: string
}

type Level = Exclude<LogLevel, 'silent'>

/**
 * One structured JSON line per transition. Only ids, names, counts and timings:
 * never arguments, observations, prompts or anything that could hold a secret.
 */
export function logTransition(env: LogEnv, event: TransitionEvent, state: RunState): void {
  if (!logs(env.LOG_LEVEL, 'info')) return
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

/** A structured log line for a non-transition event (every string in it is redacted). */
export function logEvent(
  env: LogEnv,
  msg: string,
  fields: Record<string, unknown>,
  level: Level = 'info',
): void {
  // One stream for every level: the line's own `level` field says which it is.
  if (logs(env.LOG_LEVEL, level)) console.log(JSON.stringify({ level, msg, ...redactDeep(fields) }))
}
