import { continueConversation } from '../../kernel/conversation'
import type { Conversation } from '../../kernel/conversation-schema'
import { RUN_ID_PATTERN } from '../../kernel/names'
import { runStub } from '../types'
import type { RunOwner } from '../run-owner'
import { StartError } from './start-error'

/**
 * The conversation a new run continues (`"continue": "<run id>"`, docs/architecture.md#conversations):
 * the earlier run must exist and be finished (succeeded or failed, a cancelled run included).
 * Its turns, and those of the runs before it, are fitted into `maxHistoryTokens` here, once:
 * the new run keeps the result in its state, and takes the earlier run's owner.
 */
export async function continuationOf<T extends Rpc.DurableObjectBranded | undefined>(
  runs: DurableObjectNamespace<T>,
  runId: string,
  maxHistoryTokens: number,
): Promise<{ conversation: Conversation; owner: RunOwner }> {
  if (!RUN_ID_PATTERN.test(runId)) {
    throw new StartError(
      'invalid',
      'invalid_run_id',
      `continue must be a run id ("run_" and 32 hex digits), got "${runId.slice(0, 100)}"`,
    )
  }
  const answer = await runStub(runs, runId).followUp()
  if (answer.ok) {
    // The follow-up belongs to whoever owns the run it continues, not to who asked for it.
    return {
      conversation: continueConversation(answer.source, maxHistoryTokens),
      owner: answer.owner,
    }
  }
  if (answer.code === 'no_run') {
    throw new StartError('not_found', 'run_not_found', `no run ${runId} to continue`)
  }
  if (answer.code === 'deleted') {
    throw new StartError(
      'not_found',
      'run_deleted',
      `run ${runId} was deleted, so its conversation cannot be continued; start a new run`,
    )
  }
  throw new StartError(
    'conflict',
    'run_not_finished',
    `run ${runId} is ${answer.status}: a run can be continued once it has finished (succeeded or failed); wait for it, or cancel it first`,
    { runId, status: answer.status },
  )
}
