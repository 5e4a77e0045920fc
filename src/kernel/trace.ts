import type { StopReason } from './budget'
import { conversationView, type ConversationView } from './conversation'
import type { Approval, RunState } from './state'

/** One call in the trace: what was called, with what, and what came back. */
export interface TraceCall {
  id: string
  name: string
  args: Record<string, unknown>
  observation: string
  /** Characters before truncation. */
  originalSize: number
  truncated: boolean
  handle?: string
  ms: number
  status: string
  kind?: string
  approval?: Approval
  argsError?: string
  /** The call was written as text in a native reply, in this format family. */
  fromText?: string
}

export interface TraceStep {
  i: number
  kind: 'action' | 'finish' | 'format_error'
  thought: string
  calls: TraceCall[]
  promptTokens: number
  completionTokens: number
  estimated: boolean
  costUsd?: number
  /** Prompt tokens the provider served from its cache, when it reported them. */
  cachedPromptTokens?: number
  /** Tokens of old observations elided from this step's request (maxContextTokens). */
  elidedTokens: number
  /** Estimated tokens of the tool specs this step's request offered. */
  toolSpecTokens: number
  lostModelCalls: number
  ms: number
  modelMs: number
  finishReason: string
  formatError?: string
}

/** The serializable trace of a run: did it succeed, why it stopped, every step. JSON. */
export interface RunResult {
  id: string
  ok: boolean
  /** Empty unless ok: failure is never dressed as a half answer. */
  answer: string
  /** A run with an output schema that finished: its validated answer (`answer` renders it). */
  output?: unknown
  /** Null while the run is still going. */
  stopReason: StopReason | null
  error?: string
  phase: RunState['phase']
  protocol: RunState['protocol']
  model?: string
  /** The agent the run started with, and the version of it the run copied. */
  agent: { name: string; version: string }
  /** Where the run stands in its conversation (a run that continues nothing starts its own). */
  conversation: ConversationView
  /** A child run: the run that delegated it (docs/agents.md#delegation). */
  parentRunId?: string
  /** The child runs its delegated calls started, in the order they started. */
  children?: TraceChild[]
  steps: TraceStep[]
  usage: TraceUsage
}

/** A child run as its parent's trace names it. */
export interface TraceChild {
  callId: string
  runId: string
  agent: string
  /** From the parent's record: `running` until the call has the child's answer. */
  status: 'running' | 'succeeded' | 'failed'
}

/** The child runs of a run's delegated calls, with what the run knows of their state. */
export function childrenOf(state: RunState): TraceChild[] {
  const children: TraceChild[] = []
  for (const step of state.steps) {
    for (const c of step.calls) {
      if (!c.child) continue
      const status = c.status !== 'done' ? 'running' : c.kind === 'ok' ? 'succeeded' : 'failed'
      children.push({ callId: c.id, runId: c.child.runId, agent: c.child.agent, status })
    }
  }
  return children
}

export interface TraceUsage {
  promptTokens: number
  completionTokens: number
  estimated: boolean
  costUsd?: number
  /** Prompt tokens served from the provider's cache (where it reported them). */
  cachedPromptTokens: number
  /** Every model call made, including those whose answers were lost to a crash. */
  modelCalls: number
  lostModelCalls: number
  /** Estimated prompt tokens of the lost calls (included in `promptTokens`). */
  lostPromptTokens: number
  activeMs: number
}

/** The trace of a run in any phase. */
export function toRunResult(state: RunState): RunResult {
  const r = state.result
  return {
    id: state.id,
    ok: r?.ok ?? false,
    answer: r?.ok ? r.answer : '',
    ...(r?.ok && state.agent.output ? { output: r.output } : {}),
    stopReason: r?.stopReason ?? null,
    ...(r?.error ? { error: r.error } : {}),
    phase: state.phase,
    protocol: state.protocol,
    ...(state.model ? { model: state.model } : {}),
    agent: { name: state.agent.name, version: state.agent.version },
    conversation: conversationView(state),
    ...(state.parent ? { parentRunId: state.parent.runId } : {}),
    ...family(state),
    steps: state.steps.map((s) => ({
      i: s.i,
      kind: s.kind,
      thought: s.thought,
      calls: s.calls.map((c) => ({
        id: c.id,
        name: c.name,
        args: c.args,
        observation: c.observation ?? '',
        originalSize: c.originalSize ?? 0,
        truncated: c.truncated,
        ...(c.handle ? { handle: c.handle } : {}),
        ms: c.ms ?? 0,
        status: c.status,
        ...(c.kind ? { kind: c.kind } : {}),
        ...(c.approval ? { approval: c.approval } : {}),
        ...(c.argsError ? { argsError: c.argsError } : {}),
        ...(c.fromText ? { fromText: c.fromText } : {}),
      })),
      promptTokens: s.promptTokens,
      completionTokens: s.completionTokens,
      estimated: s.estimated,
      ...(s.costUsd !== null ? { costUsd: s.costUsd } : {}),
      ...(s.cachedPromptTokens !== null ? { cachedPromptTokens: s.cachedPromptTokens } : {}),
      elidedTokens: s.elidedTokens,
      toolSpecTokens: s.toolSpecTokens,
      lostModelCalls: s.lostModelCalls,
      ms: s.ms,
      modelMs: s.modelMs,
      finishReason: s.finishReason,
      ...(s.formatError ? { formatError: s.formatError } : {}),
    })),
    usage: traceUsage(state),
  }
}

function family(state: RunState): { children?: TraceChild[] } {
  const children = childrenOf(state)
  return children.length ? { children } : {}
}

/** What a run has used so far, as the trace and the run_finished event report it. */
export function traceUsage(state: RunState): TraceUsage {
  const u = state.usage
  return {
    promptTokens: u.promptTokens,
    completionTokens: u.completionTokens,
    estimated: u.estimated,
    ...(u.costUsd !== null ? { costUsd: u.costUsd } : {}),
    cachedPromptTokens: u.cachedPromptTokens,
    modelCalls: u.modelCalls,
    lostModelCalls: u.lostModelCalls,
    lostPromptTokens: u.lostPromptTokens,
    activeMs: state.activeMs,
  }
}
