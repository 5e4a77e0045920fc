/**
 * Walks over JSON that a caller, a model or a tool controls, without recursion: a value nested
 * thousands of levels deep must never overflow the stack (a RangeError that would surface as a
 * 500 or a crashed run). Every walk here uses an explicit stack; `MAX_JSON_DEPTH` is the nesting
 * the service accepts, checked where such JSON comes in (docs/limits.md).
 */

/** The deepest nesting accepted in a request body, tool arguments or a tool's schema. */
export const MAX_JSON_DEPTH = 64

/**
 * The nesting depth of JSON text (`1` for `{}` or `[]`, `0` for a scalar), counting brackets
 * outside strings; it stops counting once past `limit`. Malformed text is measured as far as
 * its brackets go: parsing says what else is wrong.
 */
export function jsonTextDepth(text: string, limit = Infinity): number {
  let depth = 0
  let max = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 92)
        i++ // backslash: skip the escaped character
      else if (c === 34) inString = false
    } else if (c === 34) inString = true
    else if (c === 123 || c === 91) {
      if (++depth > max) {
        max = depth
        if (max > limit) return max
      }
    } else if (c === 125 || c === 93) depth--
  }
  return max
}

/** The nesting depth of a value (`1` for an object or array, `0` for a scalar), stopping past `limit`. */
export function jsonDepth(value: unknown, limit = Infinity): number {
  if (!value || typeof value !== 'object') return 0
  let max = 0
  // Objects still to look into and their depths, made only when something nests: flat arguments
  // (the usual tool call) allocate nothing.
  let stack: unknown[] | undefined
  let v: unknown = value
  let d = 1
  for (;;) {
    if (d > max) {
      max = d
      if (max > limit) return max
    }
    if (Array.isArray(v)) {
      for (const child of v)
        if (child && typeof child === 'object') (stack ??= []).push(child, d + 1)
    } else {
      const record = v as Record<string, unknown>
      for (const key in record) {
        const child = record[key]
        if (child && typeof child === 'object' && Object.hasOwn(record, key)) {
          ;(stack ??= []).push(child, d + 1)
        }
      }
    }
    if (!stack?.length) return max
    d = stack.pop() as number
    v = stack.pop()
  }
}

/** Whether a value nests deeper than `MAX_JSON_DEPTH` (or `limit`). */
export function tooDeep(value: unknown, limit = MAX_JSON_DEPTH): boolean {
  return jsonDepth(value, limit) > limit
}

/**
 * A copy of a JSON value with every string passed through `leaf` (keys are kept): for walks
 * that rewrite text wherever it sits, such as redaction. Iterative, so any depth is safe.
 */
export function mapJsonStrings(value: unknown, leaf: (text: string) => string): unknown {
  if (typeof value === 'string') return leaf(value)
  if (!value || typeof value !== 'object') return value
  const root: unknown = Array.isArray(value) ? [] : {}
  const stack: [Record<string, unknown>, Record<string, unknown>][] = [
    [value as Record<string, unknown>, root as Record<string, unknown>],
  ]
  while (stack.length) {
    const [from, to] = stack.pop()!
    for (const key of Object.keys(from)) {
      const v = from[key]
      if (typeof v === 'string') to[key] = leaf(v)
      else if (v && typeof v === 'object') {
        const copy = Array.isArray(v) ? [] : {}
        to[key] = copy
        stack.push([v as Record<string, unknown>, copy as Record<string, unknown>])
      } else to[key] = v
    }
  }
  return root
}

/**
 * `JSON.stringify` of a JSON value without recursion, object keys in sorted order when `sortKeys`
 * (canonical JSON: equal values give equal strings). Values `JSON.stringify` leaves out of an
 * object (undefined, functions) are left out, and are `null` in an array, as there.
 */
export function stringifyJson(value: unknown, options: { sortKeys?: boolean } = {}): string {
  // Most values are shallow: written recursively while the depth stays under MAX_JSON_DEPTH (a
  // stack that small is safe, and this way allocates no frame per value), with the explicit stack
  // below for anything deeper. Both write the same text.
  const shallow = writeShallow(value, options.sortKeys === true, 0)
  return shallow === TOO_DEEP ? stringifyDeep(value, options) : (shallow ?? 'null')
}

const TOO_DEEP = Symbol('too deep')

/** `value` as JSON (undefined for what JSON leaves out), or TOO_DEEP past MAX_JSON_DEPTH. */
function writeShallow(
  value: unknown,
  sortKeys: boolean,
  depth: number,
): string | undefined | typeof TOO_DEEP {
  if (value === null || typeof value !== 'object') return JSON.stringify(value)
  if (depth >= MAX_JSON_DEPTH) return TOO_DEEP
  if (Array.isArray(value)) {
    let out = '['
    for (let i = 0; i < value.length; i++) {
      const item = writeShallow(value[i], sortKeys, depth + 1)
      if (item === TOO_DEEP) return TOO_DEEP
      out += `${i ? ',' : ''}${item ?? 'null'}`
    }
    return `${out}]`
  }
  const record = value as Record<string, unknown>
  const keys = Object.keys(record)
  if (sortKeys) keys.sort()
  let out = '{'
  let first = true
  for (const key of keys) {
    const v = record[key]
    if (!writable(v)) continue
    const text = writeShallow(v, sortKeys, depth + 1)
    if (text === TOO_DEEP) return TOO_DEEP
    out += `${first ? '' : ','}${JSON.stringify(key)}:${text}`
    first = false
  }
  return `${out}}`
}

function stringifyDeep(value: unknown, options: { sortKeys?: boolean }): string {
  const out: string[] = []
  // Each frame is a value to write, or a literal piece of text (punctuation) to append.
  const stack: ({ text: string } | { value: unknown })[] = [{ value }]
  while (stack.length) {
    const frame = stack.pop()!
    if ('text' in frame) {
      out.push(frame.text)
      continue
    }
    const v = frame.value
    if (v === null || typeof v !== 'object') {
      const scalar = JSON.stringify(v)
      out.push(scalar === undefined ? 'null' : scalar)
      continue
    }
    const pieces: ({ text: string } | { value: unknown })[] = []
    if (Array.isArray(v)) {
      pieces.push({ text: '[' })
      v.forEach((item, i) => {
        if (i) pieces.push({ text: ',' })
        pieces.push({ value: item })
      })
      pieces.push({ text: ']' })
    } else {
      const record = v as Record<string, unknown>
      const keys = Object.keys(record).filter((k) => writable(record[k]))
      if (options.sortKeys) keys.sort()
      pieces.push({ text: '{' })
      keys.forEach((key, i) => {
        pieces.push({ text: `${i ? ',' : ''}${JSON.stringify(key)}:` })
        pieces.push({ value: record[key] })
      })
      pieces.push({ text: '}' })
    }
    for (let i = pieces.length - 1; i >= 0; i--) stack.push(pieces[i]!)
  }
  return out.join('')
}

function writable(value: unknown): boolean {
  return value !== undefined && typeof value !== 'function' && typeof value !== 'symbol'
}
