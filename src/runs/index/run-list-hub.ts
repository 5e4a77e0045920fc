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

/**
 * The one Durable Object behind `GET /v1/runs/stream` (docs/architecture.md#the-run-list-stream):
 * a run's index delivery tells it what it wrote, and it passes the change on to the open
 * streams that may see the run. It stores nothing: what a restart loses, readers get by
 * listing again.
 */
export class RunListHub extends DurableObject {
  readonly #feed = new ListFeed()

  /** A change the index took (called by the run's index delivery, after its D1 write). */
  changed(change: RunListChange, owner: string | null): void {
    this.#feed.publish(change, owner)
  }

  /** Opens a run-list stream, or says which limit refuses it. */
  stream(request: ListStreamRequest): ListSubscription {
    return this.#feed.subscribe(request)
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
