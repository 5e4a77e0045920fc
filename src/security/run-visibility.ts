/**
 * Which runs a caller may see: the one rule the run list, the approval inbox and the run-list
 * stream apply (docs/security.md). A viewer sees every run, or only the runs its own token
 * started; a run whose starter is not known is shown only to viewers that see every run.
 */
export interface RunViewer {
  /** The token's name (what runs record as `requestedBy`). */
  name: string
  sees: 'all' | 'own'
}

/** What the rule reads of a run: who started it (absent when not known). */
export interface RunOwner {
  requestedBy?: string | undefined
}

/** Whether `viewer` may see the run. */
export function maySeeRun(viewer: RunViewer, run: RunOwner): boolean {
  return viewer.sees === 'all' || (run.requestedBy !== undefined && run.requestedBy === viewer.name)
}
