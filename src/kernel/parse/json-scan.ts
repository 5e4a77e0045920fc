import { readLooseValue, skipSpace, type LooseOptions } from './loose-value'

/** One complete `{…}` object found in free text. `end` is exclusive. */
export interface JsonSpan {
  start: number
  end: number
  text: string
  value: Record<string, unknown>
  /** True when reading it needed a repair (quotes, commas, Python literals, …). */
  repaired: boolean
}

export interface ScanResult {
  spans: JsonSpan[]
  /** Where an object that never closes starts (-1 if none): nothing after it is read. */
  truncatedAt: number
  /** Characters the reads went through, retries included: linear means a small multiple. */
  work: number
}

/**
 * Finds complete objects in free text, in order, in linear time: each `{` is read as a loose JSON
 * value; a read that succeeds yields a span and scanning goes on after it (objects nested in it
 * are its members, never spans of their own). A read that fails goes on where it failed, or at
 * the first `{` that starts a line inside the failed stretch (a second draft after a broken
 * first); those retries are capped at a few passes over the text. An object that never closes
 * ends the scan: what follows it may be its own members (`{"action": "a", "args": {"name": …}`).
 * `visit` returns true to stop early.
 */
export function scanObjects(
  text: string,
  visit?: (span: JsonSpan) => boolean,
  opts?: LooseOptions,
): ScanResult {
  const spans: JsonSpan[] = []
  // Retried stretches may be read twice; the cap keeps the total linear.
  let budget = 4 * text.length + 4096
  const limit = budget
  let i = 0
  let fullWidth = -2 // next `｛`, cached: searching for it from every brace would be quadratic
  for (;;) {
    const ascii = text.indexOf('{', i)
    if (fullWidth !== -1 && fullWidth < i) fullWidth = text.indexOf('｛', i)
    const start = fullWidth < 0 ? ascii : ascii < 0 ? fullWidth : Math.min(ascii, fullWidth)
    if (start < 0) return { spans, truncatedAt: -1, work: limit - budget }
    // Most braces in prose are not objects; a peek at what follows saves starting a read.
    const first = skipSpace(text, start + 1)
    if (first < text.length && !mayOpenObject(text.charCodeAt(first))) {
      budget -= first - start
      i = Math.max(first, start + 1)
      continue
    }
    const read = readLooseValue(text, start, opts)
    if (read.ok) {
      budget -= read.end - start
      const value = read.value
      if (isPlainObject(value)) {
        const span = {
          start,
          end: read.end,
          text: text.slice(start, read.end),
          value,
          repaired: read.repaired,
        }
        spans.push(span)
        if (visit?.(span)) return { spans, truncatedAt: -1, work: limit - budget }
      }
      i = read.end
      continue
    }
    if (read.truncated) return { spans, truncatedAt: start, work: limit - budget }
    const failedAt = Math.max(read.at, start + 1)
    budget -= failedAt - start
    const retry = budget > 0 ? lineStartBrace(text, start + 1, failedAt) : -1
    i = retry >= 0 ? retry : failedAt
  }
}

/** `scanObjects` without early stop: every complete object in the text. */
export function scanJsonObjects(text: string): JsonSpan[] {
  return scanObjects(text).spans
}

/** True for `{…}` values, false for arrays, null and primitives. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** A quote, `}`, or the start of a bare key (a letter, `_`, `$`, or any non-ASCII letter). */
function mayOpenObject(c: number): boolean {
  if (c === 0x22 || c === 0x27 || c === 0x7d || c === 0x5f || c === 0x24) return true
  if ((c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a)) return true
  return c >= 0x80
}

/** The first `{` in [from, to] that only whitespace separates from a line start or a tag. */
function lineStartBrace(text: string, from: number, to: number): number {
  for (let k = from; k <= to && k < text.length; k++) {
    if (text.charCodeAt(k) !== 0x7b) continue
    let j = k - 1
    while (j >= 0 && (text[j] === ' ' || text[j] === '\t')) j--
    if (j < 0 || text[j] === '\n' || text[j] === '>') return k
  }
  return -1
}
