/**
 * Which runs a caller may see (docs/security.md#who-sees-which-runs), as the run-list stream
 * applies it to each change; the list and the inbox apply the same rule in their queries, the
 * run routes in `reachableRun`. A caller limited to one owner's runs sees a run only when the
 * run's owner is that owner; a run with no owner (no token's) is seen only by unlimited callers.
 */
export function maySeeRun(
  /** The owner whose runs alone the caller sees, or undefined: it sees every run. */
  onlyOwner: string | undefined,
  /** The run's owner: the name of the token it belongs to, null or undefined for none. */
  runOwner: string | null | undefined,
): boolean {
  return onlyOwner === undefined || (runOwner != null && runOwner === onlyOwner)
}
