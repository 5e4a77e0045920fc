/**
 * How a caller reaches the run-list hub (runs/index/run-list-hub.ts) without loading its class.
 */

/** The one hub's name: every index write of the deployment notifies the same object. */
const HUB_NAME = 'run-list'

/** The deployment's hub. */
export function runListHub<T extends Rpc.DurableObjectBranded | undefined>(
  ns: DurableObjectNamespace<T>,
): DurableObjectStub<T> {
  return ns.get(ns.idFromName(HUB_NAME))
}
