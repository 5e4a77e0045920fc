import { TaskNotFoundError, UnsupportedOperationError } from '@a2a-js/sdk/errors'
import { RUN_ID_PATTERN } from '../../kernel/names'
import { runStub, type RunStoreApi } from '../../runs/types'
import type { RunVisibility, Scope } from '../../security/api-tokens'
import type { Env } from '../../env'

/**
 * The API token an A2A request came with, itself or through an OAuth client it authorized
 * (routes/serve/a2a.ts authenticates it).
 */
export interface A2aCaller {
  name: string
  scopes: readonly Scope[]
  runs: RunVisibility
  /** The OAuth client acting for the token; absent for the API token itself. */
  client?: string
}

/**
 * Refuses a method the token's scopes do not allow, saying which scope it needs: starting or
 * cancelling needs runs:write, reading runs:read, answering a question approvals:write.
 */
export function requireScope(caller: A2aCaller, scope: Scope, what: string): void {
  if (caller.scopes.includes(scope)) return
  // An OAuth client holds only the scopes its person granted: they may grant this one too.
  const fix = caller.client
    ? 'authorize this client again with it'
    : 'add it in API_TOKENS or use another token'
  throw new UnsupportedOperationError(
    `token "${caller.name}" lacks the scope ${scope}, which ${what} needs; ${fix}`,
  )
}

/**
 * The run of task `id` if the caller may reach it (docs/security.md#who-sees-which-runs), else
 * task not found: exactly the answer for an id no run has, so nothing about another token's
 * runs leaks.
 */
export async function reachableTask(env: Env, caller: A2aCaller, id: string): Promise<RunStoreApi> {
  if (!RUN_ID_PATTERN.test(id)) throw taskNotFound(id)
  const stub = runStub(env.RUNS, id)
  if (caller.runs !== 'own') return stub
  const answer = await stub.owner()
  if (answer.run !== 'live' || answer.owner !== caller.name) throw taskNotFound(id)
  return stub
}

/** The one answer for a task the caller cannot see, whether or not it exists. */
export function taskNotFound(id: string): TaskNotFoundError {
  return new TaskNotFoundError(`no task ${id.slice(0, 100)}`)
}
