import type { Message } from '@a2a-js/sdk'
import { RequestMalformedError } from '@a2a-js/sdk/errors'
import type { Env } from '../../env'
import { listRuns } from '../../runs/index/run-index'
import { reachableTask, requireScope, type A2aCaller } from './a2a-caller'

/**
 * The run a new message continues (docs/serving.md#a2a), or undefined: a new conversation. A
 * context is a conversation (its id is the conversation's, the id of its first run); a message
 * in one continues the task it names last in `referenceTaskIds`, else the context's newest run
 * as the run index lists it (GET /v1/runs?conversation=). Continuing reads the earlier run, so
 * it needs runs:read, and only the caller's runs can be continued by a token limited to its own.
 */
export async function conversationToContinue(
  env: Env,
  caller: A2aCaller,
  message: Message,
): Promise<string | undefined> {
  const contextId = message.contextId
  const referenced = message.referenceTaskIds.at(-1)
  if (!contextId && !referenced) return undefined
  requireScope(caller, 'runs:read', 'continuing a conversation (the new run reads the earlier one)')
  if (referenced) {
    const stub = await reachableTask(env, caller, referenced)
    const view = await stub.get()
    if (view && contextId && view.conversation.id !== contextId) {
      throw new RequestMalformedError(
        `referenced task ${referenced} belongs to context ${view.conversation.id}, not ${contextId.slice(0, 100)}`,
      )
    }
    return referenced
  }
  const newest = await listRuns(env.RUN_INDEX, {
    conversation: contextId,
    limit: 1,
    ...(caller.runs === 'own' ? { owner: caller.name } : {}),
  })
  const run = newest?.items[0]
  if (!run) {
    throw new RequestMalformedError(
      `contextId ${contextId.slice(0, 100)} names no conversation of yours; leave it out to start one, or name the task to continue in referenceTaskIds`,
    )
  }
  return run.id
}
