/** One balanced `{…}` found in free text. `end` is exclusive. */
export interface JsonSpan {
  start: number
  end: number
  text: string
}

// Characters after which a quote can open a JSON (or Python-style) string. A quote anywhere else
// is prose, like the `"` in `a 5" screen {`, so a stray brace cannot flip the string state.
const STRING_OPENERS = new Set(['{', '[', ',', ':'])
// How far an unquoted key may run before we decide the braces are prose, not an object.
const MAX_BARE_KEY = 64

/**
 * Finds every top-level balanced `{…}` in `text` that starts like an object (empty, a quoted key
 * or a bare key followed by `:`), in order, in linear time. Braces inside strings do not count;
 * unmatched braces and prose braces such as `{x}` are skipped, and objects nested in a skipped
 * span are still found.
 */
export function scanJsonObjects(text: string): JsonSpan[] {
  return scanJson(text).spans
}

/**
 * `scanJsonObjects` plus `unclosedAt`: where the first object-like `{` that never closes starts
 * (-1 if none). Spans after it are likely members of a cut-off object, not objects of their own.
 */
export function scanJson(text: string): { spans: JsonSpan[]; unclosedAt: number } {
  const { starts, ends } = matchBraces(text)
  const spans: JsonSpan[] = []
  let coveredUntil = -1
  let unclosedAt = -1
  for (let k = 0; k < starts.length; k++) {
    const start = starts[k]!
    const end = ends[k]!
    if (start < coveredUntil || !startsLikeObject(text, start)) continue
    if (end < 0) {
      if (unclosedAt < 0) unclosedAt = start
      continue
    }
    spans.push({ start, end, text: text.slice(start, end) })
    coveredUntil = end
  }
  return { spans, unclosedAt }
}

const OPEN = 0x7b // {
const CLOSE = 0x7d // }
const DQUOTE = 0x22
const SQUOTE = 0x27

/**
 * Matches braces with a stack, string-aware while any brace is open. Returns every `{` in order
 * with the end (exclusive) of its matching `}`, or -1 when it never closes.
 */
function matchBraces(text: string): { starts: number[]; ends: number[] } {
  const starts: number[] = []
  const ends: number[] = []
  const open: number[] = [] // indexes into starts/ends
  let prev = '' // last significant character outside strings while a brace is open
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code === OPEN) {
      open.push(starts.length)
      starts.push(i)
      ends.push(-1)
      prev = '{'
    } else if (code === CLOSE) {
      const slot = open.pop()
      if (slot !== undefined) ends[slot] = i + 1
      prev = '}'
    } else if (open.length === 0 || code <= 0x20) {
      continue
    } else if ((code === DQUOTE || code === SQUOTE) && STRING_OPENERS.has(prev)) {
      i = skipString(text, i)
      prev = '"'
    } else {
      prev = text[i]!
    }
  }
  return { starts, ends }
}

/** Returns the index of the quote closing the string opened at `i`, or `text.length` if none. */
export function skipString(text: string, i: number): number {
  const quote = text[i]
  for (let j = i + 1; j < text.length; j++) {
    const ch = text[j]
    if (ch === '\\') j++
    else if (ch === quote) return j
  }
  return text.length
}

function startsLikeObject(text: string, start: number): boolean {
  let i = start + 1
  while (i < text.length && text.charCodeAt(i) <= 0x20) i++
  const ch = text[i]
  if (ch === '}' || ch === '"' || ch === "'") return true
  if (ch === undefined || !isKeyChar(text.charCodeAt(i)) || (ch >= '0' && ch <= '9')) return false
  const limit = Math.min(text.length, i + MAX_BARE_KEY)
  i++
  while (i < limit && isKeyChar(text.charCodeAt(i))) i++
  while (i < text.length && (text[i] === ' ' || text[i] === '\t')) i++
  return text[i] === ':'
}

/** [A-Za-z0-9_$-] */
function isKeyChar(code: number): boolean {
  return (
    (code >= 0x61 && code <= 0x7a) ||
    (code >= 0x41 && code <= 0x5a) ||
    (code >= 0x30 && code <= 0x39) ||
    code === 0x5f ||
    code === 0x24 ||
    code === 0x2d
  )
}
