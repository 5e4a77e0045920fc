import { scanJsonObjects, skipString } from './json-scan'

export { scanJsonObjects, type JsonSpan } from './json-scan'

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
 * Parses tool arguments, repairing what models commonly get wrong (fences, prose around the
 * object, trailing commas, single quotes, bare keys, Python literals, truncation, double
 * encoding). Only for tools without side effects. Never throws.
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
  const direct = tryJson(raw)
  if (direct.ok && typeof direct.value !== 'string') return strict // valid JSON, wrong kind
  if (direct.ok) {
    const inner = parseJsonObjectLoose(direct.value as string)
    if (inner) return { ok: true, value: inner.value, repaired: true }
    return strict
  }
  const found = findObjectLoose(stripFence(raw))
  if (found) return { ok: true, value: found, repaired: true }
  return { ok: false, error: `${strict.error}; it could not be repaired into a JSON object` }
}

/**
 * Parses one object's text: exact JSON first, then the loose rewrite. `repaired` says whether the
 * rewrite was needed. Returns undefined when the text is not an object either way.
 */
export function parseJsonObjectLoose(
  text: string,
): { value: Record<string, unknown>; repaired: boolean } | undefined {
  if (text.length > MAX_LOOSE_JSON_CHARS) return undefined
  const exact = tryJson(text)
  if (exact.ok)
    return isPlainObject(exact.value) ? { value: exact.value, repaired: false } : undefined
  const loose = tryJson(rewriteLooseJson(text))
  return loose.ok && isPlainObject(loose.value) ? { value: loose.value, repaired: true } : undefined
}

/** True for `{…}` values, false for arrays, null and primitives. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
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

function findObjectLoose(text: string): Record<string, unknown> | undefined {
  const spans = scanJsonObjects(text)
  const first = text.indexOf('{')
  if (first >= 0 && !(spans[0]?.start === first)) {
    // The first brace never closes: the output was probably cut off, and the balanced objects
    // after it are its members, not the arguments. rewriteLooseJson closes what is open.
    const cut = parseJsonObjectLoose(text.slice(first))
    if (cut) return cut.value
  }
  for (const span of spans) {
    const parsed = parseJsonObjectLoose(span.text)
    if (parsed) return parsed.value
  }
  return undefined
}

/**
 * Rewrites near-JSON into JSON in one pass: single-quoted strings, bare keys, Python literals,
 * trailing commas, raw control characters in strings, and unclosed strings/brackets at the end.
 */
export function rewriteLooseJson(text: string): string {
  let out = ''
  const stack: string[] = []
  let i = 0
  while (i < text.length) {
    const ch = text[i]!
    if (ch === '"' || ch === "'") {
      const end = skipString(text, i)
      out += requote(text.slice(i + 1, end), ch)
      i = end + 1
    } else if (ch === '{' || ch === '[') {
      stack.push(ch === '{' ? '}' : ']')
      out += ch
      i++
    } else if (ch === '}' || ch === ']') {
      if (stack[stack.length - 1] === ch) stack.pop()
      out += ch
      i++
    } else if (ch === ',') {
      let j = i + 1
      while (j < text.length && /\s/.test(text[j]!)) j++
      if (j < text.length && text[j] !== '}' && text[j] !== ']') out += ch
      i = j
    } else if (/[A-Za-z_$]/.test(ch)) {
      let j = i + 1
      while (j < text.length && /[\w$]/.test(text[j]!)) j++
      out += bareWord(text, text.slice(i, j), j, stack)
      i = j
    } else {
      out += ch
      i++
    }
  }
  if (/:\s*$/.test(out)) out += 'null' // cut off right after a key
  while (stack.length > 0) out += stack.pop()
  return out
}

const PY_LITERALS: Record<string, string> = {
  True: 'true',
  False: 'false',
  None: 'null',
  undefined: 'null',
}

function bareWord(text: string, word: string, after: number, stack: string[]): string {
  let j = after
  while (j < text.length && (text[j] === ' ' || text[j] === '\t')) j++
  if (text[j] === ':' && stack[stack.length - 1] === '}') return JSON.stringify(word)
  return PY_LITERALS[word] ?? word
}

/** Re-emits a string body (without its quotes) as a double-quoted JSON string. */
function requote(body: string, quote: string): string {
  let out = '"'
  for (let i = 0; i < body.length; i++) {
    const ch = body[i]!
    if (ch === '\\' && i + 1 < body.length) {
      const next = body[i + 1]!
      // \' is not a JSON escape; an escaped quote of the other kind needs no escape at all.
      out += next === "'" ? "'" : ch + next
      i++
    } else if (ch === '"' && quote === "'") {
      out += '\\"'
    } else if (ch === '\\') {
      out += '\\\\'
    } else if (ch < ' ') {
      out += CONTROL_ESCAPES[ch] ?? `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`
    } else {
      out += ch
    }
  }
  return out + '"'
}

const CONTROL_ESCAPES: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' }

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
