import { createRunState, type RunState } from '../kernel/state'
import { redact, redactJson } from '../security/redact'
import { traceOf } from './otel/otel-ids'
import type { RunInfo, StartInput } from './types'

/**
 * A new run's state and what the object keeps beside it (who asked, where to report). A task or
 * metadata that holds a configured secret is kept without it, like everything a run stores.
 */
export function newRun(input: StartInput, now: number): { state: RunState; info: RunInfo } {
  const state = createRunState({
    id: input.id,
    task: redact(input.task),
    tools: input.tools,
    protocol: input.protocol,
    budget: input.budget,
    policy: input.policy,
    now,
    ...(input.conversation ? { conversation: input.conversation } : {}),
    ...(input.agent ? { agent: input.agent } : {}),
    ...(input.parent ? { parent: input.parent } : {}),
  })
  const info: RunInfo = {
    requestedBy: input.requestedBy,
    owner: input.owner,
    ...(input.requestHash ? { requestHash: input.requestHash } : {}),
    ...(input.callbackUrl ? { callbackUrl: input.callbackUrl } : {}),
    ...(input.callbackEvents ? { callbackEvents: input.callbackEvents } : {}),
    ...(input.metadata ? { metadata: redactJson(input.metadata) } : {}),
    ...(input.model ? { model: input.model } : {}),
    ...(input.slack ? { slack: input.slack } : {}),
    ...(input.slackCards ? { slackCards: input.slackCards } : {}),
    ...(input.mcpTools?.length ? { mcpTools: input.mcpTools } : {}),
    // Kept beside the state, so every slice, in any instance, exports into the same trace.
    trace: traceOf(state.id, input.trace),
  }
  return { state, info }
}
