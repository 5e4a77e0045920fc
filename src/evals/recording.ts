import * as z from 'zod/mini'
import { sameJson } from '../kernel/canonical'
import type { ModelResponse, NativeToolCall } from '../kernel/model'
import { parseRunState, type RunState } from '../kernel/state'
import { FINAL_ANSWER_TOOL } from '../kernel/system-prompt'

/**
 * A finished run as the eval replays it (docs/evals.md#record-and-replay): the model's reply of
 * each step, each call's full result and decision, and the result, read from the run's export
 * (`GET /v1/runs/:id/export`). Plain JSON: it is written into a case's `recording`.
 */
export interface Recording {
  runId: string
  agent: string
  task: string
  protocolSetting: 'auto' | 'text' | 'native'
  policy: RunState['policy']
  budget: RunState['budget']
  /** The agent's instructions and output schema as the run copied them. */
  instructions: string | null
  output: Record<string, unknown> | null
  tools: string[]
  steps: RecordedStep[]
  result: { ok: boolean; stopReason: string; answer: string; output: unknown }
  /** Filled by `--from-run` once the recording replays: what each step sent the model. */
  requests: RecordedRequest[] | null
}

export interface RecordedStep {
  kind: string
  thought: string
  answer: string | null
  formatError: string | null
  reply: ModelResponse
  calls: RecordedCall[]
}

export interface RecordedCall {
  id: string
  name: string
  args: Record<string, unknown>
  /** The whole result (not cut to the run's observation limit). */
  observation: string
  kind: string | null
  /** How a person decided a side effect; null: nobody was asked. */
  decision: 'approved' | 'denied' | null
}

/** A model request, as digests (and the system prompt in full, for a readable diff). */
export interface RecordedRequest {
  system: string
  /** SHA-256 of the messages after the system prompt. */
  messages: string
  /** SHA-256 of the tool specs offered. */
  tools: string
}

const ExportSchema = z.looseObject({
  format: z.literal('edgeloop.run-export'),
  state: z.unknown(),
  observations: z.array(z.object({ handle: z.string(), text: z.string() })),
})

/** A recording from a run's export; throws naming what is missing or why it cannot replay. */
export function recordingFromExport(doc: unknown): Recording {
  const parsed = z.safeParse(ExportSchema, doc)
  if (!parsed.success) {
    throw new TypeError(
      'not a run export: expected the JSON of GET /v1/runs/:id/export (format "edgeloop.run-export")',
    )
  }
  const read = parseRunState(parsed.data.state)
  if (!read.ok) throw new TypeError(`the export's state is not a run state: ${read.error}`)
  const state = read.state
  if (!state.result)
    throw new TypeError(
      `run ${state.id} has not finished (phase ${state.phase}): only a finished run can be recorded`,
    )
  if (state.conversation)
    throw new TypeError(
      `run ${state.id} continues a conversation: only a run of its own can be recorded`,
    )
  const full = new Map(parsed.data.observations.map((o) => [o.handle, o.text]))
  return {
    runId: state.id,
    agent: state.agent.name,
    task: state.task,
    protocolSetting: state.protocolSetting,
    policy: state.policy,
    budget: state.budget,
    instructions: state.agent.instructions,
    output: state.agent.output,
    tools: state.tools,
    steps: state.steps.map((s) => ({
      kind: s.kind,
      thought: s.thought,
      answer: s.answer,
      formatError: s.formatError,
      reply: replyOf(state, s),
      calls: s.calls.map((c) => ({
        id: c.id,
        name: c.name,
        args: c.args,
        observation: (c.handle ? full.get(c.handle) : undefined) ?? c.observation ?? '',
        kind: c.kind,
        decision: c.approval?.decision ?? null,
      })),
    })),
    result: {
      ok: state.result.ok,
      stopReason: state.result.stopReason,
      answer: state.result.answer,
      output: state.result.output,
    },
    requests: null,
  }
}

/** The reply a step was read from, rebuilt from what the step recorded. */
function replyOf(state: RunState, step: RunState['steps'][number]): ModelResponse {
  const usage = step.estimated
    ? undefined
    : { promptTokens: step.promptTokens, completionTokens: step.completionTokens }
  const base = {
    text: step.text ?? '',
    finishReason: step.finishReason as ModelResponse['finishReason'],
    ...(usage ? { usage } : {}),
    ...(state.model ? { model: state.model } : {}),
  }
  if (state.protocol === 'text') return base
  const toolCalls: NativeToolCall[] = step.calls
    .filter((c) => c.fromText === null)
    .map((c) => ({
      id: c.id,
      type: 'function',
      function: { name: c.name, arguments: c.rawArgs ?? JSON.stringify(c.args) },
    }))
  // A structured answer sent through the finish tool leaves no call behind (the reply's text is
  // its thought); one written as the reply's text is that text.
  if (
    step.kind === 'finish' &&
    state.agent.output &&
    state.result?.output !== undefined &&
    !answersAsText(step.text, state.result.output)
  ) {
    toolCalls.push({
      id: `final_${step.i}`,
      type: 'function',
      function: {
        name: FINAL_ANSWER_TOOL,
        arguments: JSON.stringify({ answer: state.result.output }),
      },
    })
  }
  return toolCalls.length ? { ...base, toolCalls } : base
}

/** Whether a reply's text is the structured answer itself (not a thought beside a finish call). */
function answersAsText(text: string | null, output: unknown): boolean {
  if (!text) return false
  try {
    return sameJson(JSON.parse(text), output)
  } catch {
    return false
  }
}
