import type { Call, RunState, Step } from '../../kernel/state'
import { redact } from '../../security/redact'
import type { GuardrailRecord } from '../../kernel/guardrails/guardrail'
import { trippedGuardrail } from '../../kernel/trace'
import type { OtelConfig } from '../../config/otel'
import type { EventLog } from '../events/event-log'
import { providerNameOf } from '../../llm/create-model'
import { spanIdOf, toolSpanKey, traceOf } from './otel-ids'
import { SPAN_KIND, type AttributeValue, type SpanInput } from './otlp-json'
import type { RunInfo } from '../types'

/** What a batch is built from. */
interface BatchInput {
  state: RunState
  info: RunInfo
  events: EventLog | undefined
  slices: number[]
  config: Pick<OtelConfig, 'captureContent'>
  defaultModel: string | undefined
}

/** The ids and names every span of a run's batches shares. */
interface SpanHead {
  traceId: string
  parentSpanId: string | undefined
  root: string
  /** The id of a span of this run (`chat:0`, `tool:call_1` …). */
  spanId: (what: string) => string
  model: string
  provider: string
  content: boolean
}

/**
 * The spans of one export batch, built from the run as stored (OpenTelemetry GenAI semantic
 * conventions): batch `step:<i>` is step i's `chat` span (the model call) and an `execute_tool`
 * span per call (with an `await_approval` span when a person was asked); batch `run` is the
 * run's `invoke_agent` span, the parent of all of them, with an event per slice. A step never
 * changes once the next one has begun, so a batch built again after a crash is the same batch.
 */
export function batchSpans(batch: string, ctx: BatchInput): SpanInput[] {
  const { state, info } = ctx
  const trace = traceOf(state.id, info.trace)
  const spanId = (what: string) => spanIdOf(state.id, trace, what)
  const head: SpanHead = {
    traceId: trace.traceId,
    parentSpanId: trace.parentSpanId,
    root: spanId('run'),
    spanId,
    model: info.model ?? state.agent.model ?? state.model ?? ctx.defaultModel ?? 'unknown',
    // Who answered is decided as the run's model was made (llm/create-model.ts): its model name.
    provider: providerOf(info.model ?? ctx.defaultModel),
    content: ctx.config.captureContent,
  }
  if (batch === 'run') return [runSpan(head, state, ctx.slices)]
  const step = state.steps[Number(batch.slice('step:'.length))]
  return step ? stepSpans(head, step, ctx.events) : []
}

/** The run's `invoke_agent` span, with an event per slice. */
function runSpan(head: SpanHead, state: RunState, slices: number[]): SpanInput {
  const { traceId, parentSpanId, model, content } = head
  const r = state.result
  return {
    traceId,
    spanId: head.root,
    ...(parentSpanId ? { parentSpanId } : {}),
    name: `invoke_agent ${state.agent.name}`,
    kind: SPAN_KIND.internal,
    startMs: state.createdAt,
    endMs: r?.finishedAt ?? state.createdAt,
    attributes: {
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': state.agent.name,
      'gen_ai.agent.version': state.agent.version,
      'gen_ai.provider.name': head.provider,
      'gen_ai.request.model': model,
      'gen_ai.conversation.id': state.conversation?.id ?? state.id,
      'gen_ai.usage.input_tokens': state.usage.promptTokens,
      'gen_ai.usage.output_tokens': state.usage.completionTokens,
      'gen_ai.usage.cache_read.input_tokens': state.usage.cachedPromptTokens,
      'edgeloop.run.id': state.id,
      'edgeloop.run.steps': state.steps.length,
      'edgeloop.run.stop_reason': r?.stopReason,
      'edgeloop.run.guardrail': trippedGuardrail(state)?.name,
      'edgeloop.run.model_calls': state.usage.modelCalls,
      'edgeloop.run.lost_model_calls': state.usage.lostModelCalls,
      'edgeloop.run.slices': slices.length,
      ...(content
        ? {
            'gen_ai.input.messages': messages('user', state.task),
            'gen_ai.output.messages': r?.ok ? messages('assistant', r.answer) : undefined,
          }
        : {}),
    },
    // Each slice is one Worker invocation; a slice after the first is a resume. Every guardrail
    // verdict is an event of its own (docs/guardrails.md#the-trace).
    events: [
      ...slices.map((at, i) => ({
        name: i === 0 ? 'edgeloop.slice' : 'edgeloop.slice.resumed',
        atMs: at,
        attributes: { 'edgeloop.slice.index': i },
      })),
      ...state.guardrails.map(guardrailEvent),
    ],
    ...(r && !r.ok ? { error: redact(r.error ?? r.stopReason).slice(0, 500) } : {}),
  }
}

/** One guardrail verdict as an event of the run's span. */
function guardrailEvent(g: GuardrailRecord) {
  return {
    name: 'edgeloop.guardrail',
    atMs: g.at,
    attributes: {
      'edgeloop.guardrail.name': g.guardrail,
      'edgeloop.guardrail.point': g.point,
      'edgeloop.guardrail.verdict': g.verdict,
      'edgeloop.guardrail.reason': g.reason ?? undefined,
      'edgeloop.guardrail.error': g.error ?? undefined,
      'edgeloop.step': g.step ?? undefined,
      'gen_ai.tool.name': g.tool ?? undefined,
      'gen_ai.tool.call.id': g.callId ?? undefined,
      'gen_ai.usage.input_tokens': g.promptTokens ?? undefined,
      'gen_ai.usage.output_tokens': g.completionTokens ?? undefined,
    },
  }
}

/** A step's `chat` span, then per call its `await_approval` span (if asked) and its tool span. */
function stepSpans(head: SpanHead, step: Step, events: EventLog | undefined): SpanInput[] {
  const { traceId, root, model, content } = head
  const times = callTimes(events, step.i)
  const chatEnd = step.at + step.modelMs
  const spans: SpanInput[] = [
    {
      traceId,
      spanId: head.spanId(`chat:${step.i}`),
      parentSpanId: root,
      name: `chat ${model}`,
      kind: SPAN_KIND.client,
      startMs: step.at,
      endMs: chatEnd,
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': head.provider,
        'gen_ai.request.model': model,
        'gen_ai.response.model': step.responseModel,
        'gen_ai.response.id': step.responseId,
        'gen_ai.response.finish_reasons': [step.finishReason],
        'gen_ai.usage.input_tokens': step.promptTokens,
        'gen_ai.usage.output_tokens': step.completionTokens,
        'gen_ai.usage.cache_read.input_tokens': step.cachedPromptTokens,
        'edgeloop.step': step.i,
        'edgeloop.step.kind': step.kind,
        'edgeloop.usage.estimated': step.estimated,
        'edgeloop.lost_model_calls': step.lostModelCalls,
        ...(content ? { 'gen_ai.output.messages': replyMessages(step) } : {}),
      },
    },
  ]
  for (const call of step.calls) {
    if (call.approval) spans.push(approvalSpan(head, call))
    const end = times.get(call.id) ?? chatEnd + (call.ms ?? 0)
    spans.push(toolSpan(head, call, end - (call.ms ?? 0), end))
  }
  return spans
}

/** The time a person took to decide on a call. */
function approvalSpan(head: SpanHead, call: Call): SpanInput {
  const approval = call.approval!
  return {
    traceId: head.traceId,
    spanId: head.spanId(`approval:${call.id}`),
    parentSpanId: head.root,
    name: `await_approval ${call.name}`,
    kind: SPAN_KIND.internal,
    startMs: approval.requestedAt,
    endMs: approval.decidedAt ?? approval.expiresAt,
    attributes: {
      'gen_ai.tool.name': call.name,
      'gen_ai.tool.call.id': call.id,
      'edgeloop.approval.decision': approval.decision,
      'edgeloop.approval.decided_by': approval.decidedBy,
      'edgeloop.approval.reason': approval.reason === 'expired' ? 'expired' : undefined,
    },
  }
}

/**
 * A tool call's span. A delegated call's is the parent of its child run's `invoke_agent` span
 * (the child joins this trace, see runs/child-runs.ts), and names the child run.
 */
function toolSpan(head: SpanHead, call: Call, startMs: number, endMs: number): SpanInput {
  const outcome = call.kind ?? (call.status === 'done' ? 'ok' : call.status)
  const failed = outcome !== 'ok' && outcome !== 'dry_run'
  const attributes: Record<string, AttributeValue> = {
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.name': call.name,
    'gen_ai.tool.call.id': call.id,
    'gen_ai.tool.type': 'function',
    'edgeloop.tool.outcome': outcome,
    'edgeloop.tool.truncated': call.truncated,
    'edgeloop.tool.attempts': call.attempts,
    'edgeloop.child_run.id': call.child?.runId,
    ...(failed ? { 'error.type': outcome } : {}),
    ...(head.content
      ? {
          'gen_ai.tool.call.arguments': redact(JSON.stringify(call.args)),
          'gen_ai.tool.call.result': redact(call.observation ?? ''),
        }
      : {}),
  }
  return {
    traceId: head.traceId,
    spanId: head.spanId(toolSpanKey(call.id)),
    parentSpanId: head.root,
    name: `execute_tool ${call.name}`,
    kind: SPAN_KIND.internal,
    startMs,
    endMs,
    attributes,
    ...(failed ? { error: outcome } : {}),
  }
}

/** When each call of a step finished, from the run's events (their times are the transitions'). */
function callTimes(events: EventLog | undefined, step: number): Map<string, number> {
  const times = new Map<string, number>()
  for (let after = 0; events;) {
    const page = events.after(after, 500)
    if (!page.length) break
    for (const e of page) {
      const data = e.data as { step?: number; callId?: string }
      if (e.type === 'call_finished' && data.step === step && data.callId) {
        times.set(data.callId, Date.parse(e.at))
      }
    }
    after = page.at(-1)!.seq
  }
  return times
}

/** The conventions' message shape (`gen_ai.input.messages`), redacted. */
function messages(role: string, text: string): string {
  return redact(JSON.stringify([{ role, parts: [{ type: 'text', content: text }] }]))
}

function replyMessages(step: Step): string {
  const parts = [
    ...(step.thought ? [{ type: 'text', content: step.thought }] : []),
    ...step.calls.map((c) => ({ type: 'tool_call', id: c.id, name: c.name, arguments: c.args })),
    ...(step.answer !== null ? [{ type: 'text', content: step.answer }] : []),
  ]
  const message = { role: 'assistant', parts, finish_reason: step.finishReason }
  return redact(JSON.stringify([message]))
}

const providerOf = (setting: string | undefined) => providerNameOf(setting?.trim())
