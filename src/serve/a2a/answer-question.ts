import { RequestMalformedError, UnsupportedOperationError } from '@a2a-js/sdk/errors'
import { loadConfig } from '../../config'
import type { Env } from '../../env'
import type { RunStoreApi } from '../../runs/types'
import { reachableTask, requireScope, taskNotFound, type A2aCaller } from './a2a-caller'
import type { MessageInput } from './message-input'

/**
 * A message to an existing task (docs/serving.md#a2a): while the run waits for exactly one
 * question, the message is its answer (a lone data part as the value, else the text), decided
 * as the API's questions route decides it, with the caller as the one who answered. Anything
 * else is refused and says where it is decided: an approval only by a person (Slack, the
 * console, the API), a connection at its link; a task that does not wait goes on as a new
 * message in its context.
 */
export async function answerQuestion(
  env: Env,
  caller: A2aCaller,
  taskId: string,
  input: MessageInput,
): Promise<RunStoreApi> {
  requireScope(caller, 'approvals:write', 'answering a question of a task')
  const stub = await reachableTask(env, caller, taskId)
  const view = await stub.get()
  if (!view) throw taskNotFound(taskId)
  const contextId = input.message.contextId
  if (contextId && contextId !== view.conversation.id) {
    throw new RequestMalformedError(
      `task ${taskId} belongs to context ${view.conversation.id}, not ${contextId.slice(0, 100)}`,
    )
  }
  if (view.status !== 'awaiting_approval') {
    throw new UnsupportedOperationError(
      `task ${taskId} does not wait for input (its run is ${view.status}); to go on with the conversation, send a new message with contextId ${view.conversation.id} and no taskId`,
    )
  }
  if (view.requestedBy.startsWith('slack:') && !loadConfig(env).security.apiApprovesSlackRuns) {
    throw new UnsupportedOperationError(
      `task ${taskId} was started from Slack, so its pending items are decided in Slack by SLACK_APPROVERS`,
    )
  }
  const questions = view.pendingApprovals.filter((i) => i.kind === 'question')
  const others = view.pendingApprovals.filter((i) => i.kind !== 'question')
  if (questions.length !== 1 || others.length) {
    const waits = view.pendingApprovals
      .map((i) =>
        i.kind === 'approval'
          ? `approval of ${i.tool} (a person decides it in Slack, the console or at ${i.href})`
          : i.kind === 'question'
            ? `question "${i.ask?.message ?? ''}" (${i.href})`
            : `connection (${String(i.ask?.details?.url ?? '')})`,
      )
      .join('; ')
    throw new UnsupportedOperationError(
      `task ${taskId} waits for ${waits}; a message answers a task only while it waits for one question and nothing else`,
    )
  }
  const question = questions[0]!
  const answer =
    input.data.length === 1 && input.text === JSON.stringify(input.data[0])
      ? input.data[0]
      : input.text
  const out = await stub.decide({
    callId: question.callId,
    kind: 'question',
    decision: 'approve',
    argsHash: question.argsHash,
    answer,
    by: caller.name,
  })
  if (out.ok) return stub
  const problems = 'problems' in out && out.problems?.length ? `: ${out.problems.join('; ')}` : ''
  if (out.code === 'invalid_answer') throw new RequestMalformedError(`${out.message}${problems}`)
  if (out.code === 'no_run') throw taskNotFound(taskId)
  throw new UnsupportedOperationError(out.message)
}
