import type { Context } from 'hono'
import { runStub, type RunStoreApi } from '../../runs/types'
import type { RunOwner } from '../../runs/run-owner'
import type { AppEnv, Principal } from '../app-env'
import { ApiError } from '../api-error'
import { RUN_ID_PATTERN } from './schemas'

/**
 * Which runs a caller reaches (docs/security.md#who-sees-which-runs): a token limited to its own
 * runs (`"runs": "own"`) reaches only runs whose owner is its name; any other caller reaches
 * every run. A run out of reach is answered exactly as one that does not exist.
 */

/** The owner whose runs alone the caller reaches, or undefined: it reaches every run. */
export function onlyOwnedBy(caller: Principal): string | undefined {
  return caller.kind === 'token' && caller.runs === 'own' ? caller.name : undefined
}

/** Who a run the caller starts belongs to: a token's name; a signed webhook's run is no token's. */
export function ownerFor(caller: Principal): RunOwner {
  return caller.kind === 'token' ? caller.name : null
}

/**
 * The stub of run `id` if the caller may reach it, else a 404 `run_not_found`, the same answer
 * as for an id no run has. A run the caller itself deleted stays its own, so it learns that.
 */
export async function reachableRun(c: Context<AppEnv>, id: string): Promise<RunStoreApi> {
  if (!RUN_ID_PATTERN.test(id)) throw notFound(id)
  const stub = runStub(c.env.RUNS, id)
  const owner = onlyOwnedBy(c.var.caller)
  if (owner === undefined) return stub
  const answer = await stub.owner()
  const own =
    (answer.run === 'live' && answer.owner === owner) ||
    (answer.run === 'deleted' && answer.by === owner)
  if (!own) throw notFound(id)
  return stub
}

function notFound(id: string): ApiError {
  return new ApiError(404, 'run_not_found', `no run ${id.slice(0, 100)}`)
}
