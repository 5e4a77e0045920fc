/**
 * workerd rejects a fetch whose cause it does not show the Worker (a host that does not resolve,
 * for one) with `internal error; reference = <id>`, and writes the cause to its own log under
 * `wdErrId = <id>` (docs/operations.md#an-unreachable-host).
 */
const RUNTIME_INTERNAL_ERROR = /^internal error; reference = (\w+)$/

/** The reference of such a failure, when `message` is one. */
export function runtimeReference(message: string): string | undefined {
  return RUNTIME_INTERNAL_ERROR.exec(message)?.[1]
}

/** Where workerd logged the cause of the failure with this reference, for an error message. */
export function runtimeReferenceHint(reference: string): string {
  return `workerd logged the cause under wdErrId = ${reference}, such as a host name that does not resolve`
}

/** What a fetch threw (its message), and where the cause is when that is only a reference. */
export function fetchFailureText(message: string): string {
  const reference = runtimeReference(message)
  return reference ? `${message} (${runtimeReferenceHint(reference)})` : message
}
