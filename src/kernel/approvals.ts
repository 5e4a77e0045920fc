import type { Call, RunState, Step } from './state'

export type Decision = 'approve' | 'deny'

export interface DecideInput {
  callId: string
  decision: Decision
  /** The argument hash the decider saw; must match the pending approval. */
  argsHash: string
  by: string
  reason?: string
  now: number
}

export type DecideOutcome =
  | { ok: true; state: RunState; call: Call }
  | {
      ok: false
      code: 'not_found' | 'hash_mismatch' | 'already_decided' | 'not_pending' | 'run_finished'
      message: string
      decidedBy?: string
      decision?: 'approved' | 'denied'
    }

/** Records the first decision on a pending approval; later ones are refused naming the first. */
export function decideApproval(state: RunState, input: DecideInput): DecideOutcome {
  const found = findCall(state, input.callId)
  if (!found) {
    return { ok: false, code: 'not_found', message: `run ${state.id} has no call ${input.callId}` }
  }
  const { call } = found
  if (call.approval?.decision) {
    return {
      ok: false,
      code: 'already_decided',
      message: `call ${call.id} was already ${call.approval.decision} by ${call.approval.decidedBy ?? 'unknown'}`,
      decidedBy: call.approval.decidedBy,
      decision: call.approval.decision,
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
  const decided: Call = {
    ...call,
    status: input.decision === 'approve' ? 'approved' : 'denied',
    approval: {
      ...call.approval,
      decision: input.decision === 'approve' ? 'approved' : 'denied',
      decidedBy: input.by,
      decidedAt: input.now,
      ...(input.reason ? { reason: input.reason } : {}),
    },
  }
  const next = replaceCall(state, found.stepIndex, decided)
  if (!pendingApprovals(next).length) next.phase = 'act'
  return { ok: true, state: next, call: decided }
}

/** Pending approvals that have expired become denials with reason `expired`. */
export function expireApprovals(state: RunState, now: number): RunState {
  let next = state
  for (const pending of pendingApprovals(state)) {
    if (pending.call.approval!.expiresAt > now) continue
    next = replaceCall(next, pending.stepIndex, {
      ...pending.call,
      status: 'denied',
      approval: {
        ...pending.call.approval!,
        decision: 'denied',
        decidedBy: 'system',
        decidedAt: now,
        reason: 'expired',
      },
    })
  }
  if (next !== state && !pendingApprovals(next).length) next.phase = 'act'
  return next
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

function findCall(state: RunState, callId: string): { stepIndex: number; call: Call } | undefined {
  for (let s = state.steps.length - 1; s >= 0; s--) {
    const call = state.steps[s]!.calls.find((c) => c.id === callId)
    if (call) return { stepIndex: s, call }
  }
  return undefined
}

/** Copy-on-write: a new state whose step `stepIndex` has `call` replaced (by id). */
export function replaceCall(state: RunState, stepIndex: number, call: Call): RunState {
  const step = state.steps[stepIndex]!
  const nextStep: Step = { ...step, calls: step.calls.map((c) => (c.id === call.id ? call : c)) }
  const steps = state.steps.slice()
  steps[stepIndex] = nextStep
  return { ...state, steps }
}
