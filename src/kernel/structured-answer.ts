import { outputProblems } from '../validation/output-schema'

/** What a final answer is, read against a run's output schema. */
export type StructuredAnswer =
  { ok: true; output: unknown; answer: string } | { ok: false; problem: string }

/**
 * `raw` (the finish's `answer`: the object itself, or JSON text) checked against `schema`. The
 * answer's text rendering is its JSON, indented, for people; the value is the run's `output`.
 */
export function structuredAnswer(schema: Record<string, unknown>, raw: unknown): StructuredAnswer {
  let value = raw
  if (typeof raw === 'string') {
    const read = readJson(raw)
    if (!read.ok) {
      return {
        ok: false,
        problem:
          'your final answer was plain text, but this run needs a JSON value matching its output schema.',
      }
    }
    value = read.value
  }
  if (value === undefined) {
    return { ok: false, problem: 'your final answer had no "answer".' }
  }
  const problems = outputProblems(schema, value)
  if (problems.length) {
    return {
      ok: false,
      problem: `your final answer does not match the output schema: ${problems.join('; ')}.`,
    }
  }
  return { ok: true, output: value, answer: JSON.stringify(value, null, 2) }
}

/** JSON text, in a ```json fence or not. */
function readJson(text: string): { ok: true; value: unknown } | { ok: false } {
  const fenced = /^```(?:json)?\s*\n([\s\S]*?)\n?```\s*$/.exec(text.trim())
  const body = (fenced ? fenced[1]! : text).trim()
  if (!body.startsWith('{') && !body.startsWith('[')) return { ok: false }
  try {
    return { ok: true, value: JSON.parse(body) }
  } catch {
    return { ok: false }
  }
}
