/**
 * One JSON value read from free text, tolerating delimiter damage only: single quotes, smart
 * quotes and full-width `｛｝［］：，` used as syntax, Python literals (True/False/None), bare
 * keys, trailing commas and raw control characters in strings. A value that does not close is
 * never closed for the model: it is `truncated`, and unusable.
 */
export type LooseRead =
  | { ok: true; value: unknown; end: number; repaired: boolean }
  | { ok: false; at: number; truncated: boolean }

export interface LooseOptions {
  /** Python syntax (single quotes, True/False/None) is the format here, not a repair. */
  python?: boolean
}

/** Deeper nesting than this is refused: models never write it, and it bounds the stack. */
export const MAX_LOOSE_DEPTH = 512

const KEY = 0
const COLON = 1
const VALUE = 2
const COMMA = 3

interface Frame {
  array: boolean
  value: Record<string, unknown> | unknown[]
  key: string
  expect: number
  /** True right after a comma: a close here is a trailing comma. */
  afterComma: boolean
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y
const WORD = /[\p{L}_$][\p{L}\p{N}_$-]*/uy

const OPENERS: Record<string, string> = { '{': '}', '｛': '｝', '[': ']', '［': '］' }
const CLOSERS = new Set(['}', '｝', ']', '］'])

/** Reads the value that starts at `start` (after no whitespace). Never throws. */
export function readLooseValue(text: string, start: number, opts: LooseOptions = {}): LooseRead {
  const python = opts.python === true
  const stack: Frame[] = []
  let repaired = false
  let i = start
  for (;;) {
    i = skipSpace(text, i)
    if (i >= text.length) return { ok: false, at: i, truncated: true }
    const ch = text[i]!
    const top = stack[stack.length - 1]
    let value: unknown
    if (top && top.expect !== VALUE && !(top.array && top.expect === KEY)) {
      if (top.expect === COLON) {
        if (ch !== ':' && ch !== '：') return fail(i)
        if (ch === '：') repaired = true
        top.expect = VALUE
        i++
        continue
      }
      if (top.expect === COMMA && (ch === ',' || ch === '，')) {
        if (ch === '，') repaired = true
        top.expect = top.array ? VALUE : KEY
        top.afterComma = true
        i++
        continue
      }
      if (CLOSERS.has(ch)) {
        const closed = closeFrame(stack, ch)
        if (closed === undefined) return fail(i)
        if (closed.trailingComma || ch === '｝' || ch === '］') repaired = true
        i++
        value = closed.value
      } else if (top.expect === KEY) {
        const key = readKey(text, i, python)
        if (!key.ok) return key
        if (key.repaired) repaired = true
        top.key = key.value
        top.expect = COLON
        i = key.end
        continue
      } else {
        return fail(i)
      }
    } else if (top?.array && CLOSERS.has(ch)) {
      // `[` then `]`, or a trailing comma before `]`.
      const closed = closeFrame(stack, ch)
      if (closed === undefined) return fail(i)
      if (closed.trailingComma || ch === '］') repaired = true
      i++
      value = closed.value
    } else {
      const close = OPENERS[ch]
      if (close !== undefined) {
        if (stack.length >= MAX_LOOSE_DEPTH) return fail(i)
        if (ch === '｛' || ch === '［') repaired = true
        const array = close === ']' || close === '］'
        stack.push({ array, value: array ? [] : {}, key: '', expect: KEY, afterComma: false })
        i++
        continue
      }
      const scalar = readScalar(text, i, python)
      if (!scalar.ok) return scalar
      if (scalar.repaired) repaired = true
      value = scalar.value
      i = scalar.end
    }
    // A value is complete: it belongs to the enclosing container, or it is the result.
    const parent = stack[stack.length - 1]
    if (!parent) return { ok: true, value, end: i, repaired }
    if (parent.array) (parent.value as unknown[]).push(value)
    else setKey(parent.value as Record<string, unknown>, parent.key, value)
    parent.expect = COMMA
    parent.afterComma = false
  }
}

/** Whitespace, the full-width space included. A loop: a sticky regex costs ~1 µs a call. */
export function skipSpace(text: string, i: number): number {
  for (; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) continue
    if (c < 0x80 || !/\s/.test(text[i]!)) break
  }
  return i
}

function fail(at: number): LooseRead {
  return { ok: false, at, truncated: false }
}

/** Pops the frame `ch` closes; undefined when it is the wrong kind of bracket or misplaced. */
function closeFrame(
  stack: Frame[],
  ch: string,
): { value: unknown; trailingComma: boolean } | undefined {
  const top = stack[stack.length - 1]!
  const closesArray = ch === ']' || ch === '］'
  if (closesArray !== top.array) return undefined
  // `{"a": }` or `{"a" }`: a close where a value or colon is missing.
  if (top.expect === COLON || (!top.array && top.expect === VALUE)) return undefined
  stack.pop()
  return { value: top.value, trailingComma: top.afterComma }
}

/** `__proto__` as data, never as the prototype (JSON.parse does the same). */
function setKey(obj: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') {
    Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true })
  } else {
    obj[key] = value
  }
}

type Part<T> = { ok: true; value: T; end: number; repaired: boolean } | LooseFail
type LooseFail = { ok: false; at: number; truncated: boolean }

function readKey(text: string, i: number, python: boolean): Part<string> {
  if (isQuote(text[i]!)) return readString(text, i, python)
  WORD.lastIndex = i
  const m = WORD.exec(text)
  if (!m) return { ok: false, at: i, truncated: false }
  // A bare key counts as a repair even in Python, where dict keys are quoted too.
  return { ok: true, value: m[0], end: i + m[0].length, repaired: true }
}

const PY_WORDS: Record<string, unknown> = { True: true, False: false, None: null }
const JSON_WORDS: Record<string, unknown> = { true: true, false: false, null: null }

function readScalar(text: string, i: number, python: boolean): Part<unknown> {
  const ch = text[i]!
  if (isQuote(ch)) return readString(text, i, python)
  if (ch === '-' || (ch >= '0' && ch <= '9')) {
    NUMBER.lastIndex = i
    const m = NUMBER.exec(text)
    if (!m) return { ok: false, at: i, truncated: i + 1 >= text.length }
    const end = i + m[0].length
    // A number cut off at the end of the text (`"n": 12`) may have been longer.
    if (end >= text.length) return { ok: false, at: end, truncated: true }
    return { ok: true, value: Number(m[0]), end, repaired: false }
  }
  WORD.lastIndex = i
  const m = WORD.exec(text)
  if (!m) return { ok: false, at: i, truncated: false }
  const word = m[0]
  const end = i + word.length
  if (end >= text.length) return { ok: false, at: end, truncated: true }
  if (Object.hasOwn(JSON_WORDS, word)) {
    return { ok: true, value: JSON_WORDS[word], end, repaired: false }
  }
  if (Object.hasOwn(PY_WORDS, word)) {
    return { ok: true, value: PY_WORDS[word], end, repaired: !python }
  }
  return { ok: false, at: i, truncated: false }
}

function isQuote(ch: string): boolean {
  return ch === '"' || ch === "'" || ch === '“' || ch === '”' || ch === '‘'
}

const ESCAPES: Record<string, string> = {
  '"': '"',
  '\\': '\\',
  '/': '/',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
}

/**
 * A string opened at `i`. Only its own kind of quote closes it, so smart quotes and apostrophes
 * inside a `"…"` value are text. A single-quoted or smart-quoted string ends at a raw newline
 * (an apostrophe in prose is not a string); a double-quoted one may hold raw newlines.
 */
function readString(text: string, i: number, python: boolean): Part<string> {
  const open = text[i]!
  const closers = open === '"' ? '"' : open === "'" ? "'" : open === '‘' ? '’' : '”“'
  let repaired = open !== '"' && !(python && open === "'")
  let out = ''
  let from = i + 1
  for (let j = i + 1; j < text.length; j++) {
    const ch = text[j]!
    if (closers.includes(ch)) {
      return { ok: true, value: out + text.slice(from, j), end: j + 1, repaired }
    }
    if (ch === '\\') {
      out += text.slice(from, j)
      const next = text[j + 1]
      if (next === undefined) return { ok: false, at: text.length, truncated: true }
      if (next === 'u') {
        const hex = text.slice(j + 2, j + 6)
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) {
          if (j + 6 > text.length) return { ok: false, at: text.length, truncated: true }
          return { ok: false, at: j, truncated: false }
        }
        out += String.fromCharCode(parseInt(hex, 16))
        j += 5
      } else if (Object.hasOwn(ESCAPES, next)) {
        out += ESCAPES[next]
        j++
      } else {
        // `\'` is Python; anything else is a stray backslash kept as written.
        if (!(python && next === "'")) repaired = true
        out += next === "'" ? "'" : '\\' + next
        j++
      }
      from = j + 1
    } else if (ch === '\n' && open !== '"') {
      return { ok: false, at: i, truncated: false }
    } else if (ch < ' ') {
      repaired = true
    }
  }
  return { ok: false, at: text.length, truncated: true }
}
