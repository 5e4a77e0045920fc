import type { RunState } from '../kernel/state'
import type { RunStatus } from '../api/enums'

/** The run's status as the API and the run index show it. */
export function statusOf(state: RunState): RunStatus {
  if (state.phase === 'done') return state.result?.ok ? 'succeeded' : 'failed'
  if (state.phase === 'await_approval') return 'awaiting_approval'
  // A run waiting for its child is running: its work goes on in the child.
  return 'running'
}
