import type { CallToolResult, Task } from '@modelcontextprotocol/sdk/types.js'
import { loadConfig } from '../../config'
import type { Env } from '../../env'
import type { RunView } from '../../runs/types'
import { structuredOf } from './agent-tools'

/**
 * A run as MCP sees it (docs/serving.md#tasks): its task (status from the run's) and, once it has
 * ended, the tool's result. Read from the run's view every time; nothing else is kept.
 */

/** The run as an MCP task; a run waiting for a person is `input_required`, saying for what. */
export function taskOf(view: RunView, pollMs: number): Task {
  const pending = [...view.pendingApprovals, ...view.descendantApprovals]
  const latest = pending
    .map((p) => p.requestedAt)
    .sort()
    .at(-1)
  const base = {
    taskId: view.id,
    createdAt: view.createdAt,
    lastUpdatedAt: latest && latest > view.createdAt ? latest : view.createdAt,
    ttl: null,
    pollInterval: pollMs,
  }
  if (view.status === 'succeeded') return { ...base, status: 'completed' }
  if (view.status === 'failed') {
    const cancelled = view.result.stopReason === 'cancelled'
    return {
      ...base,
      status: cancelled ? 'cancelled' : 'failed',
      statusMessage: failureOf(view),
    }
  }
  if (view.status === 'awaiting_approval' && pending.length) {
    return { ...base, status: 'input_required', statusMessage: waitingFor(view) }
  }
  return { ...base, status: 'working', statusMessage: `step ${view.stepCount}` }
}

/** What the run waits for, and where a person decides it. */
export function waitingFor(view: RunView): string {
  const items = [
    ...view.pendingApprovals.map((p) => ({ ...p, runId: view.id })),
    ...view.descendantApprovals,
  ]
  const what = items.map((p) =>
    p.kind === 'approval'
      ? `approval of ${p.tool} (run ${p.runId}, call ${p.callId})`
      : `${p.kind === 'question' ? 'an answer' : 'a connection'} for ${p.tool} (run ${p.runId}, call ${p.callId})`,
  )
  return `waiting for a person: ${what.join('; ')}; decided in Slack, the console or POST /v1/runs/{run}/approvals/{call}`
}

function failureOf(view: RunView): string {
  const r = view.result
  return `run ${view.id} ended without an answer (${r.stopReason ?? 'unknown'})${r.error ? `: ${r.error}` : ''}`
}

/**
 * A finished run as the tool's result: the answer as text and as `structuredContent` (the
 * agent's output, agent-tools.ts); a run that failed or was cancelled is a tool error
 * (`isError`) that says why. Every result names its run in `_meta`.
 */
export function callResultOf(env: Env, view: RunView): CallToolResult {
  const r = view.result
  const meta = { 'edgeloop/run': { id: view.id, stopReason: r.stopReason, agent: view.agent } }
  if (view.status !== 'succeeded' || !r.ok) {
    return { content: [{ type: 'text', text: failureOf(view) }], isError: true, _meta: meta }
  }
  const agent = loadConfig(env).agents.find((a) => a.name === view.agent.name) ?? null
  return {
    content: [{ type: 'text', text: r.answer }],
    structuredContent: structuredOf(agent, r.answer, r.output),
    _meta: meta,
  }
}
