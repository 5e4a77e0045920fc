/**
 * A run's owner: the name of the API token that started it (or that started the run it
 * continues, or its parent run), or null for a run no token started (a signed webhook, Slack).
 * A token limited to its own runs (`"runs": "own"` in API_TOKENS) reaches only runs whose owner
 * is its name (docs/security.md#who-sees-which-runs). The owner lives in the run's info, never in
 * the kernel state, and it never changes.
 */
export type RunOwner = string | null

/** What ownerOf reads of a run's info (RunInfo in types.ts). */
export interface OwnedInfo {
  requestedBy: string
  owner?: RunOwner
}

/**
 * What a run that does not record an owner is taken to be owned by: a run from before owners
 * were recorded belongs to the token that asked for it (`requestedBy`), unless a webhook, the
 * system or a Slack user asked (token names can be none of these, api-tokens.ts).
 */
function ownerFromRequester(requestedBy: string): RunOwner {
  if (requestedBy === 'webhook' || requestedBy === 'system' || requestedBy.includes(':'))
    return null
  return requestedBy
}

/** The owner of a run, from its info. */
export function ownerOf(info: OwnedInfo): RunOwner {
  return info.owner !== undefined ? info.owner : ownerFromRequester(info.requestedBy)
}

/**
 * What a child run (one a run starts on its behalf) puts in its StartInput: its parent's owner,
 * so a token limited to its own runs reaches the children of its runs and nothing else.
 */
export function inheritedOwner(parent: OwnedInfo): {
  owner: RunOwner
} {
  return { owner: ownerOf(parent) }
}

/**
 * The SQL that fills the owner of index rows written before owners were recorded, the same
 * rule as ownerOf (run-index-schema.ts runs it once, as it adds the column).
 */
export const OWNER_FROM_REQUESTER_SQL = `CASE WHEN requested_by IN ('webhook', 'system')
  OR instr(requested_by, ':') > 0 THEN NULL ELSE requested_by END`
