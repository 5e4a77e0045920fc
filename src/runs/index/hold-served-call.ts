import type { RunListHub } from './run-list-hub'
import { runListHub } from './run-list-hub-name'

/** A held place: `release` frees it (once the call has ended, however it ended). */
export type ServedCallHold =
  | { ok: true; release: () => void }
  | { ok: false; setting: 'SERVED_CALLS_PER_TOKEN'; limit: number }

/**
 * Asks the deployment's hub for a place for one more waiting call of `holder`, before anything
 * is started: a refusal names the setting and its value for the caller's error.
 */
export async function holdServedCall(
  hub: DurableObjectNamespace<RunListHub>,
  holder: string,
  perToken: number,
): Promise<ServedCallHold> {
  const held = await runListHub(hub).holdServedCall(holder, perToken)
  if (!held.ok) return { ok: false, setting: 'SERVED_CALLS_PER_TOKEN', limit: held.limit }
  const lease = held.lease
  return { ok: true, release: () => void lease.cancel().catch(() => {}) }
}
