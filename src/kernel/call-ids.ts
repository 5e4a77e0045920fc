import type { RunState } from './state'

/**
 * The ids of every call in a run, for keeping new ids unique (they key observation handles,
 * idempotency keys and approvals). Kept by the slice and brought up to date as steps are added,
 * instead of a scan of every earlier step for each new call: a call's id never changes once its
 * step is recorded, and within one slice a run only grows. Another run, or a state with fewer
 * steps than were indexed, starts the index again.
 */
export class CallIds {
  #runId: string | null = null
  #indexed = 0
  #ids = new Set<string>()

  /** The ids of `state`'s calls. */
  of(state: RunState): ReadonlySet<string> {
    const { steps } = state
    if (state.id !== this.#runId || steps.length < this.#indexed) {
      this.#runId = state.id
      this.#indexed = 0
      this.#ids = new Set()
    }
    for (; this.#indexed < steps.length; this.#indexed++) {
      const { calls } = steps[this.#indexed]!
      for (let k = 0; k < calls.length; k++) this.#ids.add(calls[k]!.id)
    }
    return this.#ids
  }
}
