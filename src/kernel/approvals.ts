import { sameJson } from './canonical'
import type { ConfirmHook } from './confirm'
import { describeThrown } from './describe-thrown'
import type { Outcome } from './outcome'
import { findCall } from './calls'
import { requestItem } from './pending-items'
import { replaceCall, updateState } from './update-state'
import { type Approval, type Call, type PendingKind, type RunState } from './state'
import type { Tool } from './tool'

/**
 * Approvals are scoped permissions: one run, one call id, a hash of the exact parsed arguments,
 * an expiry. Every pending item (an approval, a question, a connection: pending-items.ts) has
 * their lifecycle. This file decides them (a person, or the in-memory hook), expires and
 * cancels them; every way of closing one goes through `closeApproval`.
 */

/** What a decider asks for (the approval then records `approved` or `denied`). */
export const DECISION_REQUESTS = ['approve', 'deny'] as const
export type Decision = (typeof DECISION_REQUESTS)[number]

export interface DecideInput {
  callId: string
  /** `approve` resolves the item (approves, answers, connects); `deny` denies or declines it. */
  decision: Decision
  /** The item's hash the decider saw; must match the pending item. */
  argsHash: string
  by: string
  reason?: string
  now: number
  /** The kind of item the decider means (default `approval`); another kind is refused. */
  kind?: PendingKind
  /**
   * Approve with these arguments instead, already checked against the tool's schema
   * (`checkEditedArgs`), with their hash (`argsHash`, computed before, as hashing waits).
   */
  edit?: { args: Record<string, unknown>; hash: string }
  /** A question's answer, already checked (`answerProblems`); what a connection gave. */
  answer?: unknown
}

export const DECIDE_REFUSALS = [
  'not_found',
  'hash_mismatch',
  'already_decided',
  'not_pending',
  'run_finished',
  'wrong_kind',
  'approval_expired',
  'not_editable',
] as const

export interface DecideRefusal {
  code: (typeof DECIDE_REFUSALS)[number]
  message: string
  decidedBy?: string
  decision?: 'approved' | 'denied'
  /** The kind of the pending item (on `wrong_kind`). */
  kind?: PendingKind
  /** For `approval_expired`: when it expired (epoch ms). */
  expiredAt?: number
}

/**
 * A decision recorded, or, for the same decision sent again by the same decider (a client that
 * lost the first answer), the recorded one with `replayed: true` and nothing changed.
 */
export type DecideOutcome = Outcome<{ state: RunState; call: Call; replayed?: true }, DecideRefusal>

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
  const requested = await requestItem(call, now, 0)
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
  close: {
    decision: 'approved' | 'denied'
    by: string
    at: number
    reason: string | null
    answer?: unknown
  },
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
      answer: close.answer ?? null,
    },
  }
}

/**
 * Records the first decision on a pending item; later ones are refused naming the first. A
 * decision names the kind it is for and the hash it saw; an edit or an answer comes checked.
 */
export function decideApproval(state: RunState, input: DecideInput): DecideOutcome {
  const found = findCall(state, input.callId)
  if (!found) {
    return { ok: false, code: 'not_found', message: `run ${state.id} has no call ${input.callId}` }
  }
  const { call } = found
  const item = call.approval
  if (item?.decision && item.decidedBy === 'system' && item.reason === 'expired') {
    return expiredRefusal(call, item.expiresAt)
  }
  if (isReplay(call, input)) return { ok: true, state, call, replayed: true }
  const refused = refusal(state, call, input)
  if (refused) return refused
  const edited = input.edit && input.decision === 'approve' ? withEdit(call, input) : call
  const closed = closeApproval(edited, {
    decision: input.decision === 'approve' ? 'approved' : 'denied',
    by: input.by,
    at: input.now,
    reason:
      input.reason ??
      (call.approval!.kind === 'question' && input.decision === 'deny' ? 'declined' : null),
    ...(input.answer !== undefined && input.decision === 'approve' ? { answer: input.answer } : {}),
  })
  const next = replaceCall(state, found.stepIndex, closed)
  return { ok: true, state: settled(next), call: closed }
}

function refusal(
  state: RunState,
  call: Call,
  input: DecideInput,
): (DecideRefusal & { ok: false }) | null {
  const item = call.approval
  if (item?.decision) {
    const by = item.decidedBy ?? 'unknown'
    return {
      ok: false,
      code: 'already_decided',
      message: `call ${call.id} was already ${item.decision} by ${by}`,
      decidedBy: by,
      decision: item.decision,
    }
  }
  if (state.phase === 'done') {
    return { ok: false, code: 'run_finished', message: `run ${state.id} has finished` }
  }
  if (call.status !== 'awaiting_approval' || !item) {
    return {
      ok: false,
      code: 'not_pending',
      message: `call ${call.id} is not waiting for a person`,
    }
  }
  const kind = input.kind ?? 'approval'
  if (item.kind !== kind) {
    return {
      ok: false,
      code: 'wrong_kind',
      message: `call ${call.id} waits for ${KIND_WORDS[item.kind]}, not ${KIND_WORDS[kind]}`,
      kind: item.kind,
    }
  }
  if (item.hash !== input.argsHash) {
    return {
      ok: false,
      code: 'hash_mismatch',
      message: `the hash does not match call ${call.id}'s pending ${item.kind}; reload it and decide again`,
    }
  }
  // Past its expiry it is expired, even before the alarm has closed it.
  if (item.expiresAt <= input.now) return expiredRefusal(call, item.expiresAt)
  return null
}

/**
 * The same decision by the same decider on the same hash (the one shown, or for an edited
 * approval the one shown before the edit) and, for a question, the same answer: a client that
 * lost the first answer.
 */
function isReplay(call: Call, input: DecideInput): boolean {
  const item = call.approval
  const requested = input.decision === 'approve' ? 'approved' : 'denied'
  return (
    !!item &&
    item.decision === requested &&
    item.decidedBy === input.by &&
    (item.hash === input.argsHash || item.edit?.originalHash === input.argsHash) &&
    (input.answer === undefined || sameJson(item.answer, input.answer))
  )
}

function expiredRefusal(call: Call, expiredAt: number): DecideRefusal & { ok: false } {
  const kind = call.approval?.kind ?? 'approval'
  return {
    ok: false,
    code: 'approval_expired',
    message: `call ${call.id}'s ${kind} expired at ${new Date(expiredAt).toISOString()} before anyone decided; the call did not run`,
    expiredAt,
  }
}

/** What each kind of item waits for, in a refusal's words. */
const KIND_WORDS: Record<PendingKind, string> = {
  approval: 'an approval',
  question: 'an answer to a question',
  connect: 'an account to be connected',
}

/** The call with the approver's arguments, the original kept beside them with who changed them. */
function withEdit(call: Call, input: DecideInput): Call {
  const item = call.approval!
  const edit = { originalArgs: call.args, originalHash: item.hash, by: input.by, at: input.now }
  return { ...call, args: input.edit!.args, approval: { ...item, hash: input.edit!.hash, edit } }
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
