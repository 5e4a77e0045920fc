import { streamRefusal } from '../events/event-stream'

/** A waiting served call's place, or the per-token limit that refuses it. */
export type ServedHold =
  | { ok: true; lease: ReadableStream<Uint8Array> }
  | { ok: false; code: 'too_many_streams'; scope: 'deployment' | 'token'; limit: number }

/**
 * The calls served to other agents that wait at once (an MCP call held open, an A2A message
 * that waits or streams), counted per token across the deployment in the run-list hub, as its
 * list streams are (`streamRefusal`, docs/limits.md#served-calls). A hold lasts as long as its
 * lease, a stream the caller cancels when the call ends; a caller that goes away cancels it too.
 */
export class ServedHolds {
  readonly #held = new Set<{ holder: string }>()

  /** A place for one more waiting call of `holder`, or the refusal when it has `perToken`. */
  hold(holder: string, perToken: number): ServedHold {
    // No deployment-wide cap: each token is bounded, and the runs' own streams are.
    const refused = streamRefusal(this.#held, holder, 'deployment', Infinity, perToken)
    if (refused) return refused
    const entry = { holder }
    const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>()
    this.#held.add(entry)
    writable
      .getWriter()
      .closed.catch(() => {})
      .finally(() => this.#held.delete(entry))
    return { ok: true, lease: readable }
  }

  /** Calls held now. */
  get size(): number {
    return this.#held.size
  }
}
