import type { StopReason } from './budget'
import { copyState, updateState } from './update-state'
import { type ModelCall, type RunState } from './state'
import { stopped, transitionTo, type Slice, type Transition } from './transition'

/**
 * The first transition of think: check the budgets and write the model call's record, which is
 * persisted before the call is made (see `think`). A record found here that this slice did not
 * write is a call whose answer was lost: it is counted first, so the budgets include it.
 */
export function startModelCall(state: RunState, slice: Slice, started: number): Transition {
  const lost = state.modelCall
  const counted = countLostModelCall(state, slice)
  const { budget, usage } = counted
  const spent = budgetSpent(counted)
  if (spent) return stopped(counted, spent.reason, slice, spent.error)
  // Only the size: the request itself is built when the call is made (callModel).
  const tokens = slice.render.tokens(counted, slice.registry)
  if (usage.promptTokens + tokens > budget.maxPromptTokens) {
    return stopped(
      counted,
      'token_budget',
      slice,
      `the next request (~${tokens} tokens) would pass maxPromptTokens (${budget.maxPromptTokens}; ${usage.promptTokens} used)`,
    )
  }
  const step = counted.steps.length
  slice.startedModelCalls.add(step)
  const modelCall = {
    step,
    attempt: (lost?.attempt ?? 0) + 1,
    promptTokens: tokens,
    startedAt: started,
  }
  const next = copyState(counted)
  next.modelCall = modelCall
  return transitionTo(next, 'model_call_started', { step, promptTokens: tokens }, 'model_call')
}

/**
 * `state` with its model-call record counted as a call made whose answer was lost, when it is
 * one: a record this slice did not write (its process died while the model answered). A record
 * this slice wrote has not been sent yet, or is being answered here.
 */
export function countLostModelCall(state: RunState, slice: Slice): RunState {
  const record = state.modelCall
  if (!record || slice.startedModelCalls.has(record.step)) return state
  return countLostCall(state, record, slice)
}

/** A model call whose answer was lost: counted as made, its prompt tokens as estimated. */
export function countLostCall(state: RunState, lost: ModelCall, slice: Slice): RunState {
  const u = state.usage
  const price = slice.deps.pricing
  const cost = price ? (lost.promptTokens * price.promptPer1K) / 1000 : null
  return updateState(state, {
    usage: {
      promptTokens: u.promptTokens + lost.promptTokens,
      completionTokens: u.completionTokens,
      estimated: true,
      costUsd: cost === null ? u.costUsd : (u.costUsd ?? 0) + cost,
      cachedPromptTokens: u.cachedPromptTokens,
      modelCalls: u.modelCalls + 1,
      lostModelCalls: u.lostModelCalls + 1,
      lostPromptTokens: u.lostPromptTokens + lost.promptTokens,
    },
  })
}

/** The budget that is spent before the next model call, if any. */
function budgetSpent(state: RunState): { reason: StopReason; error: string } | null {
  const { budget, usage } = state
  if (state.steps.length >= budget.maxSteps) {
    return {
      reason: 'max_steps',
      error: `reached maxSteps (${budget.maxSteps}) without a final answer`,
    }
  }
  if (state.activeMs >= budget.maxSeconds * 1000) {
    return { reason: 'timeout', error: `used the ${budget.maxSeconds}s time budget` }
  }
  if (budget.maxCostUsd !== undefined && (usage.costUsd ?? 0) >= budget.maxCostUsd) {
    return { reason: 'cost_budget', error: `spent $${usage.costUsd} of $${budget.maxCostUsd}` }
  }
  return null
}
