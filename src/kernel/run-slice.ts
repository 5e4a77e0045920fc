import type { EdgeSlice } from './budget'
import { isThenable } from './dispatch'
import { prepareDeps, transitionWith, type AdvanceDeps, type TransitionEvent } from './machine'
import type { RunState } from './state'

export type SliceEnd = 'done' | 'awaiting_approval' | 'max_transitions' | 'max_wall' | 'max_bytes'

export interface SliceResult {
  state: RunState
  end: SliceEnd
  transitions: number
  bytes: number
}

/**
 * Advances a run until it finishes, waits for a person, or spends the invocation's slice
 * (DESIGN §4). `persist` runs after every transition that changed the state, before the next.
 */
export async function runSlice(
  initial: RunState,
  deps: AdvanceDeps,
  slice: EdgeSlice,
  persist: (state: RunState, event: TransitionEvent) => void | Promise<void> = () => {},
): Promise<SliceResult> {
  const full = prepareDeps(deps)
  const now = full.now
  const started = now()
  let state = initial
  let transitions = 0
  let bytes = 0
  for (;;) {
    if (state.phase === 'done') return { state, end: 'done', transitions, bytes }
    // Synchronous transitions (most of the act phase) cost no promise (npm run bench).
    const pending = transitionWith(state, full)
    const out = isThenable(pending) ? await pending : pending
    transitions++
    bytes += out.event.bytes
    if (out.state === state) {
      // Nothing to do until a person decides (or an approval expires).
      return { state, end: 'awaiting_approval', transitions, bytes }
    }
    state = out.state
    const persisted = persist(state, out.event)
    if (isThenable(persisted)) await persisted
    // A started side effect must run in this same invocation: stopping here would make the
    // next one see it as interrupted and report an unknown outcome.
    if (out.event.action === 'start_call') continue
    if (state.phase === 'done') return { state, end: 'done', transitions, bytes }
    if (transitions >= slice.maxTransitions)
      return { state, end: 'max_transitions', transitions, bytes }
    if (now() - started >= slice.maxWallMs) return { state, end: 'max_wall', transitions, bytes }
    if (bytes >= slice.maxBytes) return { state, end: 'max_bytes', transitions, bytes }
  }
}
