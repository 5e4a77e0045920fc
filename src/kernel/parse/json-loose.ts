import { isPlainObject, scanObjects } from './json-scan'
import { readLooseValue, type LooseOptions } from './loose-value'

export { isPlainObject, scanJsonObjects, scanObjects, type JsonSpan } from './json-scan'
export { readLooseValue, type LooseRead } from './loose-value'

export type StrictArgs = { ok: true; value: Record<string, unknown> } | { ok: false; error: string }
export type TolerantArgs =
  { ok: true; value: Record<string, unknown>; repaired: boolean } | { ok: false; error: string }

/** Inputs above this are refused rather than repaired: repair work must stay bounded. */
export const MAX_LOOSE_JSON_CHARS = 1_000_000

/** Parses tool arguments exactly as JSON; empty text means no arguments. Never throws. */
export function parseArgsStrict(raw: string): StrictArgs {
  if (raw.trim() === '') return { ok: true, value: {} }
  let value: unknown
  try {
    value = JSON.parse(raw)
  } catch (err) {
    return { ok: false, error: `arguments are not valid JSON: ${describeJsonError(err)}` }
  }
  if (isPlainObject(value)) return { ok: true, value }
  return { ok: false, error: `arguments must be a JSON object, got ${jsonKind(value)}` }
}

/**
 * Parses tool arguments, repairing delimiter damage models commonly make (fences, prose around
 * the object, trailing commas, single or smart quotes, full-width punctuation, bare keys, Python
 * literals, double encoding). Cut-off arguments are refused, never closed. Only for tools
 * without side effects. Never throws.
 */
export function parseArgsTolerant(raw: string): TolerantArgs {
  if (raw.length > MAX_LOOSE_JSON_CHARS) {
    return {
      ok: false,
      error: `arguments are ${raw.length} characters, over the ${MAX_LOOSE_JSON_CHARS} repair limit; send a smaller JSON object`,
    }
  }
  const strict = parseArgsStrict(raw)
  if (strict.ok) return { ok: true, value: strict.value, repaired: false }
  return repairArgs(raw, strict)
}

/**
 * The repairs of `parseArgsTolerant`, for text that is not a JSON object. A function of its own
 * so that the one every call runs stays small: what V8 compiles of a fresh isolate's step path
 * (docs/development.md#kernel-performance).
 */
function repairArgs(raw: string, strict: { ok: false; error: string }): TolerantArgs {
  const direct = tryJson(raw)
  if (direct.ok && typeof direct.value !== 'string') return strict // valid JSON, wrong kind
  if (direct.ok) {
    const inner = parseJsonObjectLoose(direct.value as string)
    if (inner) return { ok: true, value: inner.value, repaired: true }
    return strict
  }
  const scan = scanObjects(stripFence(raw), () => true)
  const found = scan.spans[0]
  if (found) return { ok: true, value: found.value, repaired: true }
  if (scan.truncatedAt >= 0) {
    return {
      ok: false,
      error: `${strict.error}; the object never closes (cut off?), so it was not used. Send the whole JSON object`,
    }
  }
  return { ok: false, error: `${strict.error}; it could not be repaired into a JSON object` }
}

/**
 * Parses text that is one object: exact JSON first, then the loose reader. `repaired` says
 * whether a repair was needed. Undefined when the text is not one complete object either way.
 */
export function parseJsonObjectLoose(
  text: string,
  opts?: LooseOptions,
): { value: Record<string, unknown>; repaired: boolean } | undefined {
  if (text.length > MAX_LOOSE_JSON_CHARS) return undefined
  const exact = tryJson(text)
  if (exact.ok) {
    return isPlainObject(exact.value) ? { value: exact.value, repaired: false } : undefined
  }
  const start = text.search(/\S/)
  if (start < 0) return undefined
  const read = readLooseValue(text, start, opts)
  if (!read.ok || !isPlainObject(read.value) || text.slice(read.end).trim() !== '') return undefined
  return { value: read.value, repaired: read.repaired }
}

/** Returns the body of a Markdown code fence (```json … ```) if the text starts with one. */
export function stripFence(text: string): string {
  // Index arithmetic, not a regex: a lazy body plus `[ \t]*` backtracks quadratically.
  const open = text.trimStart()
  if (!open.startsWith('```')) return text
  const nl = open.indexOf('\n')
  if (nl < 0 || !/^```[\w-]*\s*$/.test(open.slice(0, nl))) return text
  const close = open.indexOf('```', nl + 1)
  return close < 0 ? text : open.slice(nl + 1, close)
}

function tryJson(text: string): { ok: true; value: unknown } | { ok: false; error: unknown } {
  try {
    return { ok: true, value: JSON.parse(text) }
  } catch (error) {
    return { ok: false, error }
  }
}

function describeJsonError(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err)
  return message.length > 200 ? `${message.slice(0, 200)}…` : message
}

function jsonKind(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'array'
  return typeof value
}
