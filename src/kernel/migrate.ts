/**
 * Migrations of saved run states to the current version. Each step takes one version to the
 * next; `parseRunState` validates the result against the current schema, so a migration only
 * reshapes and never has to check. test/fixtures/run-state-v1 and run-state-v2 hold states saved
 * by versions 1 and 2, run-state-v3 by version 3.
 */
import { agentSnapshot } from './agent-schema'

type Json = Record<string, unknown>

/** `value` brought to the current version when it is an older one; anything else as it is. */
export function migrateRunState(value: unknown): unknown {
  let state = value
  if (isRecord(state) && state.v === 1) state = v1ToV2(state)
  if (isRecord(state) && state.v === 2) state = v2ToV3(state)
  if (isRecord(state) && state.v === 3) state = v3ToV4(state)
  return state
}

/**
 * Version 4 adds the run's agent and the result's structured output. A run saved before agents
 * ran as the default agent does today: no instructions, no output schema, and its version is the
 * hash of exactly that, as a run started now would get. It keeps prompt format 1, the wording
 * that version sent (src/kernel/prompt-format.ts), so its next request continues the same bytes.
 */
function v3ToV4(s: Json): Json {
  const result = isRecord(s.result) ? { ...s.result, output: null } : s.result
  const tools = Array.isArray(s.tools) ? (s.tools as string[]) : []
  const protocol = typeof s.protocolSetting === 'string' ? s.protocolSetting : 'auto'
  const agent = {
    ...agentSnapshot(undefined, { tools, protocol, policy: s.policy }),
    promptFormat: 1,
  }
  return { ...s, v: 4, result, agent }
}

/** Version 3 adds conversations: a run saved before them continues nothing. */
function v2ToV3(s: Json): Json {
  return { ...s, v: 3, conversation: null }
}

/**
 * Version 1 left optional keys out; version 2 has every key, `null` when empty, and the model
 * call record and lost-call counts that make usage honest after a crash.
 */
function v1ToV2(s: Json): Json {
  const usage = isRecord(s.usage) ? s.usage : {}
  const result = isRecord(s.result) ? s.result : undefined
  // Version 1 counted format errors and failed tool steps apart; version 2 keeps one streak.
  const { consecutiveFormatErrors, ...rest } = s
  const streak = Math.max(Number(s.consecutiveErrors) || 0, Number(consecutiveFormatErrors) || 0)
  return {
    ...rest,
    v: 2,
    consecutiveErrors: streak,
    steps: Array.isArray(s.steps) ? s.steps.map(stepV1ToV2) : s.steps,
    usage: {
      ...usage,
      costUsd: usage.costUsd ?? null,
      lostModelCalls: 0,
      lostPromptTokens: 0,
    },
    cancelReason: s.cancelReason ?? null,
    model: s.model ?? null,
    modelCall: null,
    result: result ? { ...result, error: result.error ?? null } : null,
  }
}

function stepV1ToV2(step: unknown): unknown {
  if (!isRecord(step)) return step
  return {
    ...step,
    text: step.text ?? null,
    calls: Array.isArray(step.calls) ? step.calls.map(callV1ToV2) : step.calls,
    answer: step.answer ?? null,
    formatError: step.formatError ?? null,
    costUsd: step.costUsd ?? null,
    lostModelCalls: 0,
  }
}

function callV1ToV2(call: unknown): unknown {
  if (!isRecord(call)) return call
  const approval = isRecord(call.approval) ? call.approval : undefined
  return {
    ...call,
    rawArgs: call.rawArgs ?? null,
    argsError: call.argsError ?? null,
    fromText: null,
    approval: approval
      ? {
          ...approval,
          decision: approval.decision ?? null,
          decidedBy: approval.decidedBy ?? null,
          decidedAt: approval.decidedAt ?? null,
          reason: approval.reason ?? null,
        }
      : null,
    observation: call.observation ?? null,
    kind: call.kind ?? null,
    originalSize: call.originalSize ?? null,
    tokens: call.tokens ?? null,
    truncated: call.truncated ?? false,
    handle: call.handle ?? null,
    ms: call.ms ?? null,
    attempts: call.attempts ?? 0,
  }
}

function isRecord(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
