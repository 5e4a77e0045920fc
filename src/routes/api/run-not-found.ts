import type { RunStoreApi } from '../../runs/types'
import { ApiError } from '../api-error'

/**
 * The 404 for a run its object does not serve: `run_deleted` (with when) for a deleted run, so
 * a client holding its id learns why, else `run_not_found`.
 */
export async function runNotFound(stub: RunStoreApi, id: string): Promise<ApiError> {
  const deleted = await stub.deletion()
  if (!deleted) return new ApiError(404, 'run_not_found', `no run ${id}`)
  const at = new Date(deleted.deletedAt).toISOString()
  return new ApiError(404, 'run_deleted', `run ${id} was deleted (${at})`, { deletedAt: at })
}
