import type { Call, RunState } from './state'

/**
 * `state` with `changes` applied: what every transition uses to make its next state. The copy is
 * one object literal, not a spread: V8 builds a literal of a known shape much faster than it
 * spreads a record of twenty keys, and every step makes several copies. What a step costs now is
 * measured by `npm run bench -- kernel` (docs/architecture.md#performance).
 */
export function updateState(state: RunState, changes: Partial<RunState>): RunState {
  return Object.assign(copyState(state), changes)
}

/** A copy of `state` this transition owns (see `updateState`). */
export function copyState(state: RunState): RunState {
  return {
    v: state.v,
    id: state.id,
    task: state.task,
    protocol: state.protocol,
    protocolSetting: state.protocolSetting,
    tools: state.tools,
    budget: state.budget,
    policy: state.policy,
    phase: state.phase,
    steps: state.steps,
    usage: state.usage,
    activeMs: state.activeMs,
    consecutiveErrors: state.consecutiveErrors,
    cancelRequested: state.cancelRequested,
    cancelReason: state.cancelReason,
    createdAt: state.createdAt,
    model: state.model,
    modelCall: state.modelCall,
    result: state.result,
    conversation: state.conversation,
    agent: state.agent,
    parent: state.parent,
    guardrails: state.guardrails,
  }
}

/** Copy-on-write: a new state whose step `stepIndex` has `call` replaced (by id). */
export function replaceCall(state: RunState, stepIndex: number, call: Call): RunState {
  const step = state.steps[stepIndex]!
  const steps = state.steps.slice()
  steps[stepIndex] = { ...step, calls: step.calls.map((c) => (c.id === call.id ? call : c)) }
  return updateState(state, { steps })
}
