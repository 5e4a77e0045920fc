import { observationHandle } from '../kernel/step-messages'
import { splitConversationHandle } from '../kernel/conversation'
import type { RunState } from '../kernel/state'
import type { ObservationStore } from '../kernel/tool'
import type { RunStorage } from './storage'
import { runStub } from './types'

/**
 * `read_observation` across a conversation (docs/architecture.md#conversations): a follow-up's
 * history names earlier observations as `<run id>/obs_<call id>`. Such a handle is read from
 * that run's object, and only when that run is one of this run's earlier runs: a handle of
 * another conversation reads nothing, as if it did not exist.
 */
export function conversationObservations(
  local: ObservationStore,
  state: () => RunState,
  runs: DurableObjectNamespace | undefined,
): ObservationStore {
  return {
    put: (handle, text) => local.put(handle, text),
    async get(handle) {
      const own = await local.get(handle)
      if (own !== undefined) return own
      const split = splitConversationHandle(handle)
      const conversation = state().conversation
      if (!split || !conversation || !runs) return undefined
      if (!conversation.earlierRuns.includes(split.runId)) return undefined
      const text = await runStub(runs, split.runId).conversationObservation(
        split.handle,
        conversation.id,
      )
      return text ?? undefined
    },
  }
}

/**
 * An observation of this run by its run-local handle, for a later run of `conversationId`:
 * stored whole (a truncated one), else the call's observation as recorded in the state.
 */
export function observationForConversation(
  state: RunState,
  storage: RunStorage,
  handle: string,
  conversationId: string,
): string | null {
  const ownConversation = state.conversation?.id ?? state.id
  if (ownConversation !== conversationId) return null
  const stored = storage.getObservation(handle)
  if (stored !== undefined) return stored
  for (const step of state.steps) {
    for (const c of step.calls) {
      if (c.observation !== null && observationHandle(c.id) === handle) return c.observation
    }
  }
  return null
}
