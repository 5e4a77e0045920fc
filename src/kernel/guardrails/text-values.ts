import type { GuardrailVerdict } from './guardrail'

/**
 * Every string in a JSON value passed through `transform`: how a text guardrail reads a task, an
 * observation, a call's arguments or a structured answer alike. The same value when nothing
 * changed.
 */
export function mapStrings(value: unknown, transform: (text: string) => string): unknown {
  if (typeof value === 'string') return transform(value)
  if (Array.isArray(value)) {
    const out = value.map((v) => mapStrings(v, transform))
    return out.some((v, k) => v !== value[k]) ? out : value
  }
  if (value && typeof value === 'object') {
    let changed = false
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(value)) {
      out[k] = mapStrings(v, transform)
      if (out[k] !== v) changed = true
    }
    return changed ? out : value
  }
  return value
}

/** A text transform as a verdict: a pass when nothing changed, else a rewrite saying `reason`. */
export function rewriteVerdict(
  value: unknown,
  transform: (text: string) => string,
  reason: string,
): GuardrailVerdict {
  const out = mapStrings(value, transform)
  return out === value ? { verdict: 'pass' } : { verdict: 'rewrite', value: out, reason }
}

/** Every string of a value, for a check that only reads. */
export function stringsOf(value: unknown, into: string[] = []): string[] {
  mapStrings(value, (text) => {
    into.push(text)
    return text
  })
  return into
}
