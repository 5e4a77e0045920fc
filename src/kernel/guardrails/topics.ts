import type { Model } from '../model'
import type { Guardrail } from './guardrail'
import { judgedGuardrail } from './judge'

export interface TopicAllowListOptions {
  /** What the agent may be asked about, one short phrase each. */
  topics: readonly string[]
  model: Model
  name?: string
  onError?: 'trip' | 'pass'
  timeoutMs?: number
}

/** The judge's instructions for an allow-list of topics. */
export function topicInstructions(topics: readonly string[]): string {
  return (
    'You check that a request to an assistant is about one of these allowed topics:\n' +
    topics.map((t) => `- ${t}`).join('\n') +
    '\nPass it when it is about one of them (small talk about them included). Trip it when it ' +
    'is about something else, and name the topic it is about in the reason.'
  )
}

/** The shipped `topics` guardrail (docs/guardrails.md#topics): a model-judged allow-list. */
export function topicAllowList(options: TopicAllowListOptions): Guardrail {
  return judgedGuardrail({
    name: options.name ?? 'topics',
    model: options.model,
    instructions: topicInstructions(options.topics),
    ...(options.onError ? { onError: options.onError } : {}),
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
  })
}
