import { parseSseStream, TaskState, type Task } from '@a2a-js/sdk'
import { eventStreamLimits } from '../../config/event-streams'
import type { EnvRecord } from '../../config'
import type { Env } from '../../env'
import type { RunStoreApi } from '../../runs/types'
import { UnsupportedOperationError } from '@a2a-js/sdk/errors'
import { isSettled, runTask } from './run-task'

/** The run events after which the task's state may differ: a person asked, answered, the end. */
const STATE_EVENTS = new Set(['approval_requested', 'approval_decided', 'run_finished'])

/**
 * The run's task each time its state or status message changes, from now until `until` says
 * (by default: it is settled, terminal or waiting for a person), following the run's stored events
 * (docs/architecture.md#events): after each that may change it, the run is read again. The stream holds
 * one of the token's event streams while it lasts (EVENT_STREAMS_PER_TOKEN, docs/limits.md).
 */
export async function* followRun(
  env: Env,
  stub: RunStoreApi,
  holder: string,
  first: Task,
  until: (state: TaskState) => boolean = isSettled,
): AsyncGenerator<Task, void, undefined> {
  let last = first
  if (until(stateOf(last))) return
  const limits = eventStreamLimits(env as unknown as EnvRecord)
  let after = 0
  for (;;) {
    const opened = await stub.events({ after, holder, limits })
    if (!opened) return
    if (!opened.ok) {
      const held =
        opened.scope === 'run'
          ? `task ${first.id} has ${opened.limit} event streams open (EVENT_STREAMS_PER_RUN)`
          : `token "${holder}" holds ${opened.limit} event streams (EVENT_STREAMS_PER_TOKEN)`
      throw new UnsupportedOperationError(`${held}; close one, or poll with GetTask`)
    }
    let reopen = false
    for await (const event of parseSseStream(new Response(opened.stream))) {
      if (event.type === 'stream_closed') {
        // A slow reader is closed by the run; resume after the last event it had.
        reopen = true
        break
      }
      after = seqOf(event.data) ?? after
      if (!STATE_EVENTS.has(event.type)) continue
      const view = await stub.get()
      if (!view) return
      const task = runTask(view)
      if (changed(last, task)) {
        last = task
        yield task
      }
      if (until(stateOf(task))) return
    }
    if (!reopen) return
  }
}

function stateOf(task: Task): TaskState {
  return task.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED
}

/** A new state, or new words in the status (another pending item, say). */
function changed(before: Task, after: Task): boolean {
  return (
    stateOf(before) !== stateOf(after) ||
    before.status?.message?.messageId !== after.status?.message?.messageId
  )
}

function seqOf(data: string): number | undefined {
  try {
    const seq = (JSON.parse(data) as { seq?: unknown }).seq
    return typeof seq === 'number' ? seq : undefined
  } catch {
    return undefined
  }
}
