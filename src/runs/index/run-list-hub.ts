import { DurableObject } from 'cloudflare:workers'
import { logEvent } from '../log'
import { runListHub } from './run-list-hub-name'
import type { EnvVars } from '../../env-vars'
import {
  ListFeed,
  type ListStreamRequest,
  type ListSubscription,
  type RunListChange,
} from './list-feed'
import { ServedHolds, type ServedHold } from './served-holds'

/**
 * The one Durable Object behind `GET /v1/runs/stream` (docs/architecture.md#the-run-list-stream):
 * a run's index delivery tells it what it wrote, and it passes the change on to the open
 * streams that may see the run. It also counts the served calls each token has waiting
 * (MCP, A2A), the one place that sees them all. It stores nothing: what a restart loses, readers
 * get by listing again (and waiting calls, by holding again when they next call).
 */
export class RunListHub extends DurableObject {
  readonly #feed = new ListFeed()
  readonly #served = new ServedHolds()

  /** A change the index took (called by the run's index delivery, after its D1 write). */
  changed(change: RunListChange, owner: string | null): void {
    this.#feed.publish(change, owner)
  }

  /** Opens a run-list stream, or says which limit refuses it. */
  stream(request: ListStreamRequest): ListSubscription {
    return this.#feed.subscribe(request)
  }

  /**
   * Holds a place for a served call that waits (docs/limits.md#served-calls), or says the
   * token's limit refuses it; the place is freed when the caller cancels the lease.
   */
  holdServedCall(holder: string, perToken: number): ServedHold {
    return this.#served.hold(holder, perToken)
  }

  /** Served calls waiting now (for tests and operators). */
  servedCalls(): number {
    return this.#served.size
  }

  /** Streams open now (for tests and operators). */
  openStreams(): number {
    return this.#feed.size
  }
}

/**
 * Tells the hub about a change the index took. The list stream is a live view, not a record:
 * a hub that cannot be reached costs its readers the change (they list again when they
 * reconnect), never the index write, so a failure is logged, not thrown.
 */
export async function notifyRunList(
  hub: DurableObjectNamespace<RunListHub> | undefined,
  env: EnvVars,
  change: RunListChange,
  owner: string | null,
): Promise<void> {
  if (!hub) return
  try {
    await runListHub(hub).changed(change, owner)
  } catch (err) {
    const runId = change.type === 'run' ? change.run.id : change.id
    logEvent(env, 'run_list_notify_failed', { runId, error: (err as Error).message }, 'warn')
  }
}
