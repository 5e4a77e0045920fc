import type { Guardrail } from './guardrail'
import { stringsOf } from './text-values'

export interface AnswerLengthOptions {
  /** Characters the answer may have (a structured answer: its strings together). */
  maxChars: number
  /** Over the bound: stop the run (default), or cut the answer to the bound and say so. */
  action?: 'trip' | 'truncate'
  name?: string
}

export const DEFAULT_MAX_ANSWER_CHARS = 4_000

/** The shipped `answer_length` guardrail (docs/guardrails.md#answer-length): a bound on the answer. */
export function answerLength(options: AnswerLengthOptions): Guardrail {
  const { maxChars, action = 'trip' } = options
  return {
    name: options.name ?? 'answer_length',
    check(value) {
      const length = stringsOf(value).reduce((n, s) => n + s.length, 0)
      if (length <= maxChars) return { verdict: 'pass' }
      if (action === 'truncate' && typeof value === 'string') {
        const note = `\n[answer cut to ${maxChars} characters]`
        return {
          verdict: 'rewrite',
          value: value.slice(0, Math.max(0, maxChars - note.length)) + note,
          reason: `the answer had ${length} characters; at most ${maxChars}`,
        }
      }
      return {
        verdict: 'tripwire',
        reason: `the answer has ${length} characters; at most ${maxChars}`,
      }
    },
  }
}
