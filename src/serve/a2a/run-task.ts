import {
  Role,
  TaskState,
  type Artifact,
  type Message,
  type Part,
  type Task,
  type TaskStatus,
} from '@a2a-js/sdk'
import type { PendingApprovalView, RunView } from '../../runs/types'

/** The artifact a finished run's answer is in. */
export const ANSWER_ARTIFACT = 'answer'

/**
 * A run as an A2A task (docs/serving.md#a2a): the task's id is the run's id and its context the
 * run's conversation. A run waiting for a person (an approval, a question, a connection) is
 * `input-required`, with the pending items in its status message; a succeeded run is
 * `completed` with the answer as an artifact (a structured answer also as a data part); a
 * cancelled run is `canceled`; any other end is `failed`, with why in its status message.
 */
export function runTask(view: RunView): Task {
  const status = statusOf(view)
  return {
    id: view.id,
    contextId: view.conversation.id,
    status,
    artifacts: view.status === 'succeeded' ? [answerArtifact(view)] : [],
    history: [userMessage(view)],
    metadata: {
      runId: view.id,
      agent: view.agent.name,
      status: view.status,
      stopReason: view.result.stopReason,
      conversation: { id: view.conversation.id, position: view.conversation.position },
    },
  }
}

/** Whether a task in this state will change no more (terminal) or waits for someone (interrupted). */
export function isSettled(state: TaskState): boolean {
  return (
    state === TaskState.TASK_STATE_COMPLETED ||
    state === TaskState.TASK_STATE_FAILED ||
    state === TaskState.TASK_STATE_CANCELED ||
    state === TaskState.TASK_STATE_REJECTED ||
    state === TaskState.TASK_STATE_INPUT_REQUIRED
  )
}

/** Whether nothing more will happen to a task in this state. */
export function isTerminal(state: TaskState): boolean {
  return isSettled(state) && state !== TaskState.TASK_STATE_INPUT_REQUIRED
}

function statusOf(view: RunView): TaskStatus {
  const at = new Date().toISOString()
  switch (view.status) {
    case 'running':
      return {
        state: TaskState.TASK_STATE_WORKING,
        message: view.blocked ? agentMessage(view, [text(view.blocked.message)]) : undefined,
        timestamp: at,
      }
    case 'awaiting_approval':
      return {
        state: TaskState.TASK_STATE_INPUT_REQUIRED,
        message: agentMessage(view, waitingParts(view.pendingApprovals)),
        timestamp: at,
      }
    case 'succeeded':
      return { state: TaskState.TASK_STATE_COMPLETED, message: undefined, timestamp: at }
    case 'failed': {
      const r = view.result
      const cancelled = r.stopReason === 'cancelled'
      const why = `the run ended with ${r.stopReason ?? 'an error'}${r.error ? `: ${r.error}` : ''}`
      return {
        state: cancelled ? TaskState.TASK_STATE_CANCELED : TaskState.TASK_STATE_FAILED,
        message: agentMessage(view, [text(why)]),
        timestamp: at,
      }
    }
  }
}

/**
 * What the run waits for, said for a person and listed for a program: each item with its kind,
 * what it asks, and where it is decided (an approval only by a person: Slack, the console or
 * the API; a question may also be answered by a message to this task).
 */
function waitingParts(items: readonly PendingApprovalView[]): Part[] {
  const lines = items.map((i) => {
    switch (i.kind) {
      case 'approval':
        return `approval of ${i.tool}: a person decides it in Slack, the console or the API (${i.href})`
      case 'question':
        return `question: ${i.ask?.message ?? ''} (answer it with a message to this task, or at ${i.href})`
      case 'connect':
        return `connection: ${i.ask?.message ?? ''} (${String(i.ask?.details?.url ?? '')})`
    }
  })
  const listed = items.map((i) => ({
    kind: i.kind,
    callId: i.callId,
    tool: i.tool,
    args: i.args,
    ask: i.ask,
    actions: i.actions,
    href: i.href,
    expiresAt: i.expiresAt,
  }))
  return [
    text(`The run waits for a person:\n${lines.map((l) => `- ${l}`).join('\n')}`),
    data({ pending: listed }),
  ]
}

function answerArtifact(view: RunView): Artifact {
  const r = view.result
  const parts = [text(r.answer)]
  if (r.output !== undefined) parts.push(data(r.output))
  return {
    artifactId: ANSWER_ARTIFACT,
    name: ANSWER_ARTIFACT,
    description: `The answer of run ${view.id}`,
    parts,
    metadata: undefined,
    extensions: [],
  }
}

/** The task as it was asked: the run's task, as the caller's message. */
function userMessage(view: RunView): Message {
  return {
    messageId: `${view.id}-task`,
    contextId: view.conversation.id,
    taskId: view.id,
    role: Role.ROLE_USER,
    parts: [text(view.task)],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  }
}

function agentMessage(view: RunView, parts: Part[]): Message {
  return {
    messageId: `${view.id}-status-${view.stepCount}-${view.status}`,
    contextId: view.conversation.id,
    taskId: view.id,
    role: Role.ROLE_AGENT,
    parts,
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  }
}

function text(value: string): Part {
  return {
    content: { $case: 'text', value },
    metadata: undefined,
    filename: '',
    mediaType: 'text/plain',
  }
}

function data(value: unknown): Part {
  return {
    content: { $case: 'data', value },
    metadata: undefined,
    filename: '',
    mediaType: 'application/json',
  }
}
