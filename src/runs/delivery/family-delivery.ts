import { waitingOnChild } from '../../kernel/delegation'
import type { RunState } from '../../kernel/state'
import { DeliveryError } from '../../errors/delivery-error'
import { toApiResult } from '../api-result'
import { childOutcome } from '../child-runs'
import { runStub } from '../types'
import type { DeliveryContext, Deliverer } from '../outbox/delivery-context'
import type { Outbox } from '../outbox/outbox'
import type { OutboxResult } from '../outbox/outbox-kinds'

/**
 * What a run owes its family when it ends (docs/agents.md#delegation), through the outbox so a
 * crash or an unreachable object only delays it: a child tells its parent its outcome; a parent
 * cancels the children it still waits for (a child never outlives its parent's run).
 */
export const PARENT_KIND = 'parent' as const
export const CANCEL_CHILD_KIND = 'cancel.child' as const

/** Queued in the transaction of the transition that ends the run. */
export function queueFamily(
  outbox: Outbox,
  prev: RunState | undefined,
  next: RunState,
  now: number,
): void {
  if (next.parent) outbox.enqueue(PARENT_KIND, PARENT_KIND, {}, now)
  if (prev) queueChildCancels(outbox, prev, now)
}

/** The child's outcome, to its parent's object (which stores it and wakes). */
export const deliverParent: Deliverer<typeof PARENT_KIND> = async (_entry, ctx) => {
  const runs = needRuns(ctx)
  const state = ctx.state
  const parent = state.parent
  if (!parent) throw new DeliveryError('the run has no parent', { retryable: false })
  const outcome = childOutcome(toApiResult(state))
  const answer = await runStub(runs, parent.runId).childFinished(parent.callId, outcome)
  if (!answer.ok) {
    throw new DeliveryError(`run ${parent.runId} has no child ${state.id}`, { retryable: false })
  }
  return { parentRunId: parent.runId }
}

/** A child the ended run was waiting for, cancelled. */
export const deliverCancelChild: Deliverer<typeof CANCEL_CHILD_KIND> = async (entry, ctx) => {
  const state = ctx.state
  const why = `its parent run ${state.id} ended (${state.result?.stopReason ?? 'stopped'})`
  return cancelChild(needRuns(ctx), entry.payload.runId, state.id, why)
}

/** Queued with a run's deletion: the children it was still waiting for go with it. */
export function queueChildCancels(outbox: Outbox, state: RunState, now: number): void {
  for (const call of state.steps.at(-1)?.calls ?? []) {
    if (!waitingOnChild(call)) continue
    const payload = { runId: call.child!.runId, callId: call.id }
    outbox.enqueue(`${CANCEL_CHILD_KIND}:${call.id}`, CANCEL_CHILD_KIND, payload, now)
  }
}

/** Cancels one child run; a child that already finished (or was deleted) needs nothing more. */
export async function cancelChild(
  runs: DurableObjectNamespace,
  childRunId: string,
  parentRunId: string,
  why: string,
): Promise<OutboxResult<typeof CANCEL_CHILD_KIND>> {
  const answer = await runStub(runs, childRunId).cancel(`run:${parentRunId}`, why)
  return {
    childRunId,
    cancelled: answer.ok,
    ...(answer.code ? { code: answer.code } : {}),
  }
}

function needRuns(ctx: DeliveryContext): DurableObjectNamespace {
  if (!ctx.runs) throw new DeliveryError('the Worker has no RUNS binding')
  return ctx.runs
}
