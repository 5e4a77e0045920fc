import type { Call } from './state'
import { MAX_JSON_DEPTH, tooDeep } from '../validation/json-walk'

/**
 * A call as the model asked for it, before review. Arguments nested deeper than MAX_JSON_DEPTH
 * are not kept (storing, hashing and showing them would walk every level): the call is refused
 * with a [ToolError] that says so, like any argument error. `textLength` is the length of the
 * text the arguments were read from, when they were: each level of nesting takes a character
 * of it (a repair may wrap bare `key: value` text in one more), so arguments read from fewer than
 * MAX_JSON_DEPTH characters need no walk.
 */
export function newCall(
  id: string,
  name: string,
  args: Record<string, unknown>,
  textLength = Infinity,
): Call {
  const deep = textLength >= MAX_JSON_DEPTH && tooDeep(args)
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

/**
 * Whether every call has `status` / some call has it / the first call without it. Loops over
 * indices, as the rest of the step path: a `for…of` or a callback (`every`, `some`, `find`) costs
 * an iterator or a closure per use, which V8's optimizers remove but a fresh isolate's first
 * thousands of steps pay; together about 5% of the instructions of a fresh process's first 2k
 * steps (docs/development.md#kernel-performance).
 */
export function allHaveStatus(calls: readonly Call[], status: Call['status']): boolean {
  for (let k = 0; k < calls.length; k++) if (calls[k]!.status !== status) return false
  return true
}

export function someHasStatus(calls: readonly Call[], status: Call['status']): boolean {
  for (let k = 0; k < calls.length; k++) if (calls[k]!.status === status) return true
  return false
}

export function firstWithoutStatus(
  calls: readonly Call[],
  status: Call['status'],
): Call | undefined {
  for (let k = 0; k < calls.length; k++) if (calls[k]!.status !== status) return calls[k]
  return undefined
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
