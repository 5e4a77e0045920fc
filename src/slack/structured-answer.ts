/**
 * A structured answer (an agent's output schema, docs/agents.md#slack) as Slack shows it: compact
 * for people. An object whose values are all plain (strings, numbers, booleans, null) becomes one
 * `*key:* value` line per field, in the schema's order as the model wrote it; anything nested
 * stays the exact JSON in a code block. The trace and the API keep the value itself.
 */
import { escapeMrkdwn, jsonCodeBlock, truncateText } from './mrkdwn'

type Plain = string | number | boolean | null

/** The answer's text, escaped and cut to at most `max` characters in all. */
export function structuredAnswerText(
  output: unknown,
  max: number,
): { text: string; truncated: boolean } {
  const fields = plainFields(output)
  if (!fields) return jsonCodeBlock(output, max)
  const lines = fields.map(([key, value]) => {
    const shown = typeof value === 'string' ? value.trim() : JSON.stringify(value)
    return `*${escapeMrkdwn(key.replace(/\*/g, ''))}:* ${escapeMrkdwn(shown)}`
  })
  return truncateText(lines.join('\n'), max)
}

function plainFields(value: unknown): [string, Plain][] | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null
  const entries = Object.entries(value)
  if (!entries.length) return null
  const plain = (v: unknown): v is Plain =>
    v === null || ['string', 'number', 'boolean'].includes(typeof v)
  // A value across lines would blur where one field ends: such an answer stays JSON.
  const simple = entries.every(
    ([, v]) => plain(v) && !(typeof v === 'string' && /\n/.test(v.trim())),
  )
  return simple ? (entries as [string, Plain][]) : null
}
