import type { RunState, Step } from '../../kernel/state'
import { trippedGuardrail, traceUsage } from '../../kernel/trace'
import type { RunEventBody } from '../../api/response-schemas'

/**
 * What a run's event stream says (docs/architecture.md#events): derived from the states before and after each
 * persisted change, so the events follow the stored run, not whichever code path changed it.
 */

/** Characters of an observation an event carries; the rest is read from the trace by handle. */
export const EVENT_OBSERVATION_CHARS = 2_000
/** Characters of a thought an event carries (the trace has all of it). */
export const EVENT_THOUGHT_CHARS = 8_000

/** An event as stored and streamed (its shape: RunEvent in src/api/response-schemas.ts). */
export type RunEvent = RunEventBody
export type RunEventType = RunEvent['type']

/** What each type of event carries. */
export type RunEventData = { [T in RunEventType]: Extract<RunEvent, { type: T }>['data'] }

/** An event before it is stored (it gets its sequence number, run id and time from the log). */
export type NewRunEvent = {
  [T in RunEventType]: { type: T; data: RunEventData[T] }
}[RunEventType]

/** The events that take a run from `prev` (undefined: not created yet) to `next`. */
export function eventsBetween(prev: RunState | undefined, next: RunState): NewRunEvent[] {
  const events: NewRunEvent[] = []
  const before = prev?.steps ?? []
  // The kernel changes only the last step, and adds at most one; look from the last old one.
  for (let s = Math.max(0, before.length - 1); s < next.steps.length; s++) {
    const step = next.steps[s]!
    const old = before[s]
    if (old === step) continue
    if (!old) events.push(modelReplied(step))
    callEvents(old, step, events)
  }
  guardrailEvents(prev, next, events)
  const newStep = next.steps.length > before.length
  if (next.phase === 'think' && (prev?.phase !== 'think' || newStep)) {
    events.push({ type: 'step_started', data: { step: next.steps.length } })
  }
  if (next.phase === 'done' && prev?.phase !== 'done' && next.result) {
    const r = next.result
    events.push({
      type: 'run_finished',
      data: {
        ok: r.ok,
        answer: r.ok ? r.answer : '',
        ...(r.ok && next.agent.output ? { output: r.output } : {}),
        agent: { name: next.agent.name, version: next.agent.version },
        stopReason: r.stopReason,
        ...(r.error ? { error: r.error } : {}),
        ...guardrailOf(next),
        stepCount: next.steps.length,
        usage: traceUsage(next),
      },
    })
  }
  return events
}

/** A guardrail's tripwires and rewrites since `prev` (a pass is in the trace, not an event). */
function guardrailEvents(prev: RunState | undefined, next: RunState, events: NewRunEvent[]): void {
  for (let k = prev?.guardrails.length ?? 0; k < next.guardrails.length; k++) {
    const r = next.guardrails[k]!
    if (r.verdict === 'pass') continue
    events.push({
      type: r.verdict === 'tripwire' ? 'guardrail_tripped' : 'guardrail_rewrote',
      data: {
        guardrail: r.guardrail,
        point: r.point,
        ...(r.reason ? { reason: r.reason } : {}),
        ...(r.error ? { error: r.error } : {}),
        ...(r.step !== null ? { step: r.step } : {}),
        ...(r.tool ? { tool: r.tool } : {}),
        ...(r.callId ? { callId: r.callId } : {}),
      },
    })
  }
}

function guardrailOf(state: RunState) {
  const tripped = trippedGuardrail(state)
  return tripped ? { guardrail: tripped } : {}
}

function modelReplied(step: Step): NewRunEvent {
  return {
    type: 'model_replied',
    data: {
      step: step.i,
      kind: step.kind,
      thought: step.thought.slice(0, EVENT_THOUGHT_CHARS),
      calls: step.calls.map((c) => ({ id: c.id, tool: c.name, args: c.args })),
      ...(step.answer !== null ? { answer: step.answer } : {}),
      ...(step.formatError ? { formatError: step.formatError } : {}),
      promptTokens: step.promptTokens,
      completionTokens: step.completionTokens,
      ...(step.costUsd !== null ? { costUsd: step.costUsd } : {}),
      modelMs: step.modelMs,
    },
  }
}

/**
 * A call's moves, in the order they happen: asked for approval, decided, started, finished.
 * Read-only calls have no stored `started` record (they run inside the transition that records
 * their result), so their call_started comes with their call_finished; calls refused before
 * running (review failures, denials, unknown outcomes) have no call_started.
 */
function callEvents(old: Step | undefined, step: Step, events: NewRunEvent[]): void {
  for (const call of step.calls) {
    const was = old?.calls.find((c) => c.id === call.id)
    if (was === call) continue
    const ids = { step: step.i, callId: call.id, tool: call.name }
    if (call.status === 'awaiting_approval' && was?.status !== 'awaiting_approval') {
      events.push({
        type: 'approval_requested',
        data: {
          ...ids,
          args: call.args,
          argsHash: call.approval!.hash,
          reason: step.thought.slice(0, EVENT_THOUGHT_CHARS),
          expiresAt: new Date(call.approval!.expiresAt).toISOString(),
          // An approval's event keeps the shape it had before other kinds.
          ...(call.approval!.kind !== 'approval' ? { kind: call.approval!.kind } : {}),
          ...(call.approval!.ask ? { ask: call.approval!.ask } : {}),
        },
      })
    }
    const decision = call.approval?.decision
    if (decision && !was?.approval?.decision) {
      const { decidedBy, reason, kind, edit } = call.approval!
      events.push({
        type: 'approval_decided',
        data: {
          ...ids,
          decision,
          by: decidedBy ?? 'unknown',
          ...(reason ? { reason } : {}),
          ...(kind !== 'approval' ? { kind } : {}),
          ...(edit ? { editedArgs: call.args } : {}),
        },
      })
    }
    if (call.child && !was?.child) {
      events.push({ type: 'child_started', data: { ...ids, ...call.child } })
    }
    if (call.child && call.status === 'done' && was?.status !== 'done') {
      const status = call.kind === 'ok' ? 'succeeded' : 'failed'
      events.push({ type: 'child_finished', data: { ...ids, ...call.child, status } })
    }
    const ran = was?.status === 'ready' || was?.status === 'approved'
    const startedNow = call.status === 'started' && was?.status !== 'started'
    if (startedNow || (call.status === 'done' && ran)) {
      events.push({ type: 'call_started', data: { ...ids, args: call.args } })
    }
    if (call.status === 'done' && was?.status !== 'done') {
      const observation = call.observation ?? ''
      events.push({
        type: 'call_finished',
        data: {
          ...ids,
          kind: call.kind ?? 'ok',
          observation: observation.slice(0, EVENT_OBSERVATION_CHARS),
          truncated: !!call.truncated || observation.length > EVENT_OBSERVATION_CHARS,
          originalSize: call.originalSize ?? observation.length,
          ...(call.handle ? { handle: call.handle } : {}),
          ms: call.ms ?? 0,
        },
      })
    }
  }
}
