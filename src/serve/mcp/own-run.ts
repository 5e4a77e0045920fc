import type { Env } from '../../env'
import { RUN_ID_PATTERN } from '../../kernel/names'
import { runStub, type RunStoreApi } from '../../runs/types'
import type { McpCaller } from './mcp-caller'

/**
 * The stub of run `id` if it is a live run `caller` started (its owner), else null: what a
 * signed id names is still read only when the run is the token's own (a deleted run is gone).
 */
export async function ownRun(env: Env, caller: McpCaller, id: string): Promise<RunStoreApi | null> {
  if (!RUN_ID_PATTERN.test(id)) return null
  const stub = runStub(env.RUNS, id)
  const owner = await stub.owner()
  return owner.run === 'live' && owner.owner === caller.name ? stub : null
}
