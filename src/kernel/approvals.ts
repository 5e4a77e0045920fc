import { argsHash } from './canonical'
import type { ConfirmHook } from './confirm'
import { describeThrown } from './describe-thrown'
import type { Outcome } from './outcome'
import { findCall } from './calls'
import { replaceCall, updateState } from './update-state'
import { type Approval, type Call, type RunState } from './state'
import type { Tool } from './tool'

/**
 * Approvals are scoped permissions: one run, one call id, a hash of the exact parsed arguments,
 * an expiry. This file requests them, decides them (a person, or the in-memory hook), expires
 * and cancels them; every way of closing one goes through `closeApproval`.
 */

/** What a decider asks for (the approval then records `approved` or `denied`). */
export const DECISION_REQUESTS = ['approve', 'deny'] as const
export type Decision = (typeof DECISION_REQUESTS)[number]

export interface DecideInput {
  callId: string
  decision: Decision
  /** The argument hash the decider saw; must match the pending approval. */
  argsHash: string
  by: string
  reason?: string
  now: number
}

export interface DecideRefusal {
  code:
    | 'not_found'
    | 'hash_mismatch'
    | 'already_decided'
    | 'approval_expired'
    | 'not_pending'
    | 'run_finished'
  message: string
  decidedBy?: string
  decision?: 'approved' | 'denied'
  /** For `approval_expired`: when it expired (epoch ms). */
  expiredAt?: number
}

/**
 * A decision recorded, or, for the same decision sent again by the same decider (a client that
 * lost the first answer), the recorded one with `replayed: true` and nothing changed.
 */
export type DecideOutcome = Outcome<{ state: RunState; call: Call; replayed?: true }, DecideRefusal>

/** A call moved to `awaiting_approval`, bound to its arguments' hash, expiring after `ttl`. */
export async function requestApproval(call: Call, now: number, ttlSeconds: number): Promise<Call> {
  return {
    ...call,
    status: 'awaiting_approval',
    approval: {
      hash: await argsHash(call.name, call.args),
      requestedAt: now,
      expiresAt: now + ttlSeconds * 1000,
      decision: null,
      decidedBy: null,
      decidedAt: null,
      reason: null,
    },
  }
}

/** The answer of the in-memory confirm hook; a hook that throws refuses, and says why. */
export async function askConfirmHook(
  hook: ConfirmHook,
  call: { id: string; name: string; args: Record<string, unknown> },
  tool: Tool,
): Promise<{ allowed: boolean; failure: string | null }> {
  try {
    const allowed = await hook({ id: call.id, name: call.name, args: call.args }, tool)
    return { allowed, failure: null }
  } catch (err) {
    return { allowed: false, failure: describeThrown(err) }
  }
}

/** In memory (react()): the hook decides at once, recorded like a person's decision. */
export async function decideByHook(
  call: Call,
  tool: Tool,
  hook: ConfirmHook,
  now: number,
): Promise<Call> {
  const answer = await askConfirmHook(hook, call, tool)
  const requested = await requestApproval(call, now, 0)
  return closeApproval(requested, {
    decision: answer.allowed ? 'approved' : 'denied',
    by: 'confirm hook',
    at: now,
    reason: answer.failure ? `the confirm hook failed: ${answer.failure}` : null,
  })
}

/** A pending approval decided: the call `approved` or `denied`, with who, when and why. */
export function closeApproval(
  call: Call,
  close: { decision: 'approved' | 'denied'; by: string; at: number; reason: string | null },
): Call {
  return {
    ...call,
    status: close.decision,
    approval: {
      ...call.approval!,
      decision: close.decision,
      decidedBy: close.by,
      decidedAt: close.at,
      reason: close.reason,
    },
  }
}

/** Records the first decision on a pending approval; later ones are refused naming the first. */
export function decideApproval(state: RunState, input: DecideInput): DecideOutcome {
  const found = findCall(state, input.callId)
  if (!found) {
    return { ok: false, code: 'not_found', message: `run ${state.id} has no call ${input.callId}` }
  }
  const { call } = found
  const decided = call.approval?.decision
  if (decided && call.approval!.decidedBy === 'system' && call.approval!.reason === 'expired') {
    return expiredRefusal(call, call.approval!.expiresAt)
  }
  const requested = input.decision === 'approve' ? 'approved' : 'denied'
  if (
    decided === requested &&
    call.approval!.decidedBy === input.by &&
    call.approval!.hash === input.argsHash
  ) {
    return { ok: true, state, call, replayed: true }
  }
  if (decided) {
    const by = call.approval!.decidedBy ?? 'unknown'
    return {
      ok: false,
      code: 'already_decided',
      message: `call ${call.id} was already ${decided} by ${by}`,
      decidedBy: by,
      decision: decided,
    }
  }
  if (state.phase === 'done') {
    return { ok: false, code: 'run_finished', message: `run ${state.id} has finished` }
  }
  if (call.status !== 'awaiting_approval' || !call.approval) {
    return {
      ok: false,
      code: 'not_pending',
      message: `call ${call.id} is not waiting for approval`,
    }
  }
  if (call.approval.hash !== input.argsHash) {
    return {
      ok: false,
      code: 'hash_mismatch',
      message: `the arguments hash does not match call ${call.id}'s pending approval; reload it and decide again`,
    }
  }
  // Past its expiry it is expired, even before the alarm has closed it.
  if (call.approval.expiresAt <= input.now) return expiredRefusal(call, call.approval.expiresAt)
  const closed = closeApproval(call, {
    decision: requested,
    by: input.by,
    at: input.now,
    reason: input.reason ?? null,
  })
  const next = replaceCall(state, found.stepIndex, closed)
  return { ok: true, state: settled(next), call: closed }
}

function expiredRefusal(call: Call, expiredAt: number): DecideRefusal & { ok: false } {
  return {
    ok: false,
    code: 'approval_expired',
    message: `call ${call.id}'s approval expired at ${new Date(expiredAt).toISOString()} before anyone decided; the call did not run`,
    expiredAt,
  }
}

/** Pending approvals that have expired become denials with reason `expired`. */
export function expireApprovals(state: RunState, now: number): RunState {
  return closeAll(state, now, 'expired', (call) => call.approval!.expiresAt <= now)
}

/** Pending approvals of a cancelled run are closed as denied, so no stale button can run them. */
export function cancelApprovals(state: RunState, now: number): RunState {
  return closeAll(state, now, 'cancelled', () => true)
}

function closeAll(
  state: RunState,
  now: number,
  reason: 'expired' | 'cancelled',
  which: (call: Call) => boolean,
): RunState {
  let next = state
  for (const { stepIndex, call } of pendingApprovals(state)) {
    if (!which(call)) continue
    const closed = closeApproval(call, { decision: 'denied', by: 'system', at: now, reason })
    next = replaceCall(next, stepIndex, closed)
  }
  return next === state ? state : settled(next)
}

/** A step waiting for decisions goes back to `act` once none is pending. */
function settled(state: RunState): RunState {
  if (state.phase !== 'await_approval' || pendingApprovals(state).length) return state
  return updateState(state, { phase: 'act' })
}

/** Calls waiting for a person, with their step index. */
export function pendingApprovals(state: RunState): { stepIndex: number; call: Call }[] {
  const last = state.steps.length - 1
  const step = state.steps[last]
  if (!step) return []
  return step.calls
    .filter((c) => c.status === 'awaiting_approval')
    .map((call) => ({ stepIndex: last, call }))
}

/** The earliest expiry among pending approvals (for the alarm), or undefined. */
export function nextApprovalExpiry(state: RunState): number | undefined {
  const times = pendingApprovals(state).map((p) => p.call.approval!.expiresAt)
  return times.length ? Math.min(...times) : undefined
}

export type { Approval }
