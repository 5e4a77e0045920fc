import type { Call } from './state'
import { MAX_JSON_DEPTH, tooDeep } from '../validation/json-walk'

/**
 * A call as the model asked for it, before review. Arguments nested deeper than MAX_JSON_DEPTH
 * are not kept (storing, hashing and showing them would walk every level): the call is refused
 * with a [ToolError] that says so, like any argument error.
 */
export function newCall(id: string, name: string, args: Record<string, unknown>): Call {
  const deep = tooDeep(args)
  return {
    id,
    name,
    args: deep ? {} : args,
    rawArgs: null,
    argsError: deep
      ? `the arguments nest deeper than ${MAX_JSON_DEPTH} levels of objects and arrays; send flatter arguments`
      : null,
    fromText: null,
    status: 'pending',
    approval: null,
    observation: null,
    kind: null,
    originalSize: null,
    tokens: null,
    truncated: false,
    handle: null,
    ms: null,
    attempts: 0,
    child: null,
    policy: null,
  }
}

/** A call answered without running: its observation, and nothing spent. */
export function answeredCall(call: Call, kind: Call['kind'], observation: string): Call {
  return { ...call, status: 'done', kind, observation, originalSize: observation.length, ms: 0 }
}

/**
 * The call with this id and the index of its step, or null: in a run's state or in its trace.
 * Ids are unique in a run.
 */
export function findCall<C extends { id: string }>(
  run: { steps: readonly { calls: readonly C[] }[] },
  callId: string,
): { stepIndex: number; call: C } | null {
  for (let s = run.steps.length - 1; s >= 0; s--) {
    for (const call of run.steps[s]!.calls) if (call.id === callId) return { stepIndex: s, call }
  }
  return null
}
