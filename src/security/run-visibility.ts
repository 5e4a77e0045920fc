/**
 * Which runs a caller may see, the one rule the run-list stream applies to each change (and the
 * rule the list, the inbox and the run routes apply): a caller limited to one owner's runs sees a
 * run only when the run's owner is that owner; a run with no owner (none recorded, or no token's)
 * is seen only by callers that see every run.
 */
export function maySeeRun(
  /** The owner whose runs alone the caller sees, or undefined: it sees every run. */
  onlyOwner: string | undefined,
  /** The run's owner: the name of the token it belongs to, null or undefined for none. */
  runOwner: string | null | undefined,
): boolean {
  return onlyOwner === undefined || (runOwner != null && runOwner === onlyOwner)
}
