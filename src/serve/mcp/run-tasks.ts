import { McpError, ErrorCode, type Result, type Task } from '@modelcontextprotocol/sdk/types.js'
import type { TaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/interfaces.js'
import type { RunStoreApi, RunView } from '../../runs/types'
import type { McpCaller } from './mcp-caller'
import { ownRun } from './own-run'
import { callResultOf, taskOf } from './run-result'
import type { Env } from '../../env'

/**
 * The MCP tasks of a token (docs/serving.md#tasks): each is a run it started through `/mcp`, its
 * task id the run's id. Nothing is stored beside the run: every answer reads the run's object,
 * so a task survives a restart of the Worker and a reconnect of the client. A run another token
 * started is "not found", exactly as an id no run has (nothing about it leaks).
 */
export class RunTaskStore implements TaskStore {
  constructor(
    private readonly env: Env,
    private readonly caller: McpCaller,
    private readonly pollMs: number,
  ) {}

  /** Tasks are made by tools/call starting a run (mcp-server.ts), never by the SDK. */
  createTask(): Promise<Task> {
    return Promise.reject(
      new McpError(ErrorCode.InternalError, 'tasks are made only by calling an agent (tools/call)'),
    )
  }

  async getTask(taskId: string): Promise<Task | null> {
    const view = await this.ownRun(taskId)
    return view ? taskOf(view.view, this.pollMs) : null
  }

  /** Finished runs only; the SDK waits (polling getTask) until the run is. */
  async getTaskResult(taskId: string): Promise<Result> {
    const found = await this.ownRun(taskId)
    if (!found) throw taskNotFound(taskId)
    return callResultOf(this.env, found.view)
  }

  storeTaskResult(): Promise<void> {
    return Promise.reject(
      new McpError(
        ErrorCode.InternalError,
        "a task's result is its run's; it is never stored apart",
      ),
    )
  }

  /** Only a cancel reaches here from a client (tasks/cancel): it cancels the run. */
  async updateTaskStatus(taskId: string, status: Task['status']): Promise<void> {
    if (status !== 'cancelled') {
      throw new McpError(
        ErrorCode.InvalidParams,
        `a task's status follows its run; ${status} cannot be set`,
      )
    }
    const found = await this.ownRun(taskId)
    if (!found) throw taskNotFound(taskId)
    const out = await found.stub.cancel(
      this.caller.name,
      'cancelled by the MCP client (tasks/cancel)',
    )
    if (!out.ok) throw new McpError(ErrorCode.InvalidParams, `task ${taskId}: ${out.message}`)
  }

  listTasks(): Promise<{ tasks: Task[] }> {
    return Promise.reject(
      new McpError(
        ErrorCode.MethodNotFound,
        'tasks/list is not offered; GET /v1/runs lists the runs of this token',
      ),
    )
  }

  /** Run `id` and its stub, if it is a run this token started; else null. */
  private async ownRun(id: string): Promise<{ stub: RunStoreApi; view: RunView } | null> {
    const stub = await ownRun(this.env, this.caller, id)
    if (!stub) return null
    const view = await stub.get()
    return view ? { stub, view } : null
  }
}

/** What a client learns of a task id that is not one of its tasks. */
export function taskNotFound(taskId: string): McpError {
  return new McpError(ErrorCode.InvalidParams, `Task not found: ${taskId.slice(0, 100)}`)
}
