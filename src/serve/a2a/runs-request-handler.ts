import type {
  AgentCard,
  CancelTaskRequest,
  GetTaskRequest,
  ListTaskPushNotificationConfigsResponse,
  ListTasksResponse,
  Message,
  SendMessageRequest,
  StreamResponse,
  SubscribeToTaskRequest,
  Task,
  TaskPushNotificationConfig,
  TaskState,
} from '@a2a-js/sdk'
import { AgentCard as AgentCardCodec } from '@a2a-js/sdk'
import {
  A2AError,
  ExtendedAgentCardNotConfiguredError,
  PushNotificationNotSupportedError,
  RequestMalformedError,
  TaskNotCancelableError,
  TaskNotFoundError,
  UnsupportedOperationError,
} from '@a2a-js/sdk/errors'
import type { A2ARequestHandler } from '@a2a-js/sdk/server'
import { loadConfig, type EnvRecord } from '../../config'
import { eventStreamLimits } from '../../config/event-streams'
import { holdServedCall } from '../../runs/index/hold-served-call'
import type { Env } from '../../env'
import { logEvent } from '../../runs/log'
import { StartError, startRun } from '../../runs/start'
import type { RunStoreApi, RunView } from '../../runs/types'
import { reachableTask, requireScope, taskNotFound, type A2aCaller } from './a2a-caller'
import { agentCard } from './agent-card'
import { answerQuestion } from './answer-question'
import { conversationToContinue } from './continue-context'
import { followRun } from './follow-run'
import { messageInput } from './message-input'
import { ANSWER_ARTIFACT, isSettled, isTerminal, runTask } from './run-task'

/** How long tasks/cancel waits for the run to stop before answering with the task as it is. */
const CANCEL_WAIT_MS = 5_000
const CANCEL_POLL_MS = 100

/**
 * The A2A methods mapped onto runs for one authenticated caller (docs/serving.md#a2a): the
 * SDK's JSON-RPC transport handler parses the request and calls these; a message starts a run
 * through the run-start service with the caller as requester, a task is a run. Errors are the
 * SDK's A2A errors; anything else is logged and answered as an internal error without details.
 */
export class RunsRequestHandler implements A2ARequestHandler {
  constructor(
    private readonly env: Env,
    private readonly caller: A2aCaller,
    private readonly origin: string,
  ) {}

  async getAgentCard(): Promise<AgentCard> {
    return AgentCardCodec.fromJSON(agentCard(loadConfig(this.env).agents, this.origin))
  }

  async getAuthenticatedExtendedAgentCard(): Promise<AgentCard> {
    throw new ExtendedAgentCardNotConfiguredError(
      'this agent has no extended card: every skill is on the public card',
    )
  }

  async sendMessage(params: SendMessageRequest): Promise<Message | Task> {
    return this.guard(async () => {
      if (params.configuration?.returnImmediately) return (await this.begin(params)).task
      // A message that waits holds a place among the token's waiting calls, before it starts.
      const release = await this.hold()
      try {
        const { stub, task } = await this.begin(params)
        let last = task
        for await (const next of followRun(this.env, stub, this.caller.name, task)) last = next
        return last
      } finally {
        release()
      }
    })
  }

  async *sendMessageStream(params: SendMessageRequest): AsyncGenerator<StreamResponse> {
    const release = await this.guard(() => this.hold())
    try {
      const { stub, task } = await this.guard(() => this.begin(params))
      yield* this.stream(stub, task, isSettled)
    } finally {
      release()
    }
  }

  async *resubscribe(params: SubscribeToTaskRequest): AsyncGenerator<StreamResponse> {
    const { stub, task } = await this.guard(async () => {
      requireScope(this.caller, 'runs:read', 'reading a task')
      const stub = await reachableTask(this.env, this.caller, params.id)
      const task = runTask(await this.view(stub, params.id))
      if (isTerminal(task.status!.state)) {
        throw new UnsupportedOperationError(`task ${params.id} has ended; read it with GetTask`)
      }
      return { stub, task }
    })
    const release = await this.guard(() => this.hold())
    try {
      // A subscriber follows the task through a person's decision, to its end.
      yield* this.stream(stub, task, isTerminal)
    } finally {
      release()
    }
  }

  async getTask(params: GetTaskRequest): Promise<Task> {
    return this.guard(async () => {
      requireScope(this.caller, 'runs:read', 'reading a task')
      const stub = await reachableTask(this.env, this.caller, params.id)
      const task = runTask(await this.view(stub, params.id))
      return params.historyLength === 0 ? { ...task, history: [] } : task
    })
  }

  async cancelTask(params: CancelTaskRequest): Promise<Task> {
    return this.guard(async () => {
      requireScope(this.caller, 'runs:write', 'cancelling a task')
      const stub = await reachableTask(this.env, this.caller, params.id)
      const before = runTask(await this.view(stub, params.id))
      if (isTerminal(before.status!.state)) {
        throw new TaskNotCancelableError(`task ${params.id} has already ended; nothing to cancel`)
      }
      const out = await stub.cancel(this.caller.name, 'cancelled over A2A (CancelTask)')
      if (!out.ok) {
        if (out.code === 'no_run') throw taskNotFound(params.id)
        throw new TaskNotCancelableError(out.message)
      }
      return this.settledAfterCancel(stub, params.id)
    })
  }

  async listTasks(): Promise<ListTasksResponse> {
    throw new UnsupportedOperationError(
      'ListTasks is not served; list runs with GET /v1/runs (docs/http-api.md)',
    )
  }

  async createTaskPushNotificationConfig(): Promise<TaskPushNotificationConfig> {
    throw pushNotSupported()
  }

  async getTaskPushNotificationConfig(): Promise<TaskPushNotificationConfig> {
    throw pushNotSupported()
  }

  async listTaskPushNotificationConfigs(): Promise<ListTaskPushNotificationConfigsResponse> {
    throw pushNotSupported()
  }

  async deleteTaskPushNotificationConfig(): Promise<void> {
    throw pushNotSupported()
  }

  /** A message's run: a question of the task answered, or a new run started. */
  private async begin(params: SendMessageRequest): Promise<{ stub: RunStoreApi; task: Task }> {
    const input = messageInput(params)
    const { message } = input
    if (message.taskId) {
      const stub = await answerQuestion(this.env, this.caller, message.taskId, input)
      return { stub, task: runTask(await this.view(stub, message.taskId)) }
    }
    requireScope(this.caller, 'runs:write', 'starting a task')
    const continued = await conversationToContinue(this.env, this.caller, message)
    const { view } = await startRun(this.env, {
      task: input.text,
      requestedBy: this.caller.name,
      owner: this.caller.name,
      ...(input.skill !== undefined ? { agent: input.skill } : {}),
      ...(continued ? { continue: continued } : {}),
      // A message sent again (a retry) finds the run it started, never a second one.
      idempotencyKey: `token:${this.caller.name}:a2a:${message.messageId}`,
      metadata: { a2a: { messageId: message.messageId } },
    })
    const stub = await reachableTask(this.env, this.caller, view.id)
    return { stub, task: runTask(view) }
  }

  /** The task, then each change of it until `until` says. */
  private async *stream(
    stub: RunStoreApi,
    task: Task,
    until: (state: TaskState) => boolean,
  ): AsyncGenerator<StreamResponse> {
    yield { payload: { $case: 'task', value: task } }
    try {
      for await (const next of followRun(this.env, stub, this.caller.name, task, until)) {
        const answer = next.artifacts.find((a) => a.artifactId === ANSWER_ARTIFACT)
        if (answer) {
          yield {
            payload: {
              $case: 'artifactUpdate',
              value: {
                taskId: next.id,
                contextId: next.contextId,
                artifact: answer,
                append: false,
                lastChunk: true,
                metadata: undefined,
              },
            },
          }
        }
        yield {
          payload: {
            $case: 'statusUpdate',
            value: {
              taskId: next.id,
              contextId: next.contextId,
              status: next.status,
              metadata: next.metadata,
            },
          },
        }
      }
    } catch (err) {
      throw this.refusal(err)
    }
  }

  /**
   * The task once the cancelled run has stopped: at once for a run between slices, after the
   * side effect in flight otherwise; still working when that takes longer than CANCEL_WAIT_MS
   * (GetTask then shows it canceled).
   */
  private async settledAfterCancel(stub: RunStoreApi, id: string): Promise<Task> {
    // Counted polls, not a deadline: the wait is bounded whatever the clock says.
    for (let polls = CANCEL_WAIT_MS / CANCEL_POLL_MS; ; polls--) {
      const task = runTask(await this.view(stub, id))
      if (isTerminal(task.status!.state) || polls <= 0) return task
      await new Promise((resolve) => setTimeout(resolve, CANCEL_POLL_MS))
    }
  }

  /**
   * A place among the token's calls waiting at once across the deployment
   * (SERVED_CALLS_PER_TOKEN, docs/limits.md#served-calls), freed by the function it answers.
   */
  private async hold(): Promise<() => void> {
    const limit = eventStreamLimits(this.env as unknown as EnvRecord).servedPerToken
    const held = await holdServedCall(this.env.RUN_LIST, this.caller.name, limit)
    if (held.ok) return held.release
    throw new UnsupportedOperationError(
      `token "${this.caller.name}" already has ${held.limit} calls waiting at once (${held.setting} = ${held.limit}); nothing was started. Send with configuration.returnImmediately and poll GetTask, or retry once one has ended`,
    )
  }

  private async view(stub: RunStoreApi, id: string): Promise<RunView> {
    const view = await stub.get()
    if (!view) throw taskNotFound(id)
    return view
  }

  private async guard<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work()
    } catch (err) {
      throw this.refusal(err)
    }
  }

  /** An error as the caller gets it: A2A errors as they are, a refused start by its kind. */
  private refusal(err: unknown): A2AError {
    if (err instanceof A2AError) return err
    if (err instanceof StartError) {
      if (err.code === 'run_not_found' || err.code === 'run_deleted') {
        return new TaskNotFoundError(err.message)
      }
      // The message's id is the start's idempotency key: say it in A2A's words.
      if (err.code === 'idempotency_key_reused') {
        return new RequestMalformedError(
          'this messageId was already sent with a different message; give each message its own messageId',
        )
      }
      return new RequestMalformedError(err.message)
    }
    logEvent(
      this.env,
      'a2a_internal_error',
      { error: err instanceof Error ? `${err.name}: ${err.message}` : String(err) },
      'error',
    )
    return new A2AError('internal error; see the Worker logs')
  }
}

function pushNotSupported(): PushNotificationNotSupportedError {
  return new PushNotificationNotSupportedError(
    'push notifications are not served; stream the task (SendStreamingMessage) or poll GetTask',
  )
}
