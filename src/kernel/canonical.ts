import { sha256Hex } from '../security/sha256'
import { MAX_JSON_DEPTH, stringifyJson } from '../validation/json-walk'

/**
 * JSON with object keys sorted at every depth: equal values give equal strings. Written without
 * recursion: arguments and request bodies come from callers and models, at any depth.
 */
export function canonicalJson(value: unknown): string {
  return stringifyJson(value, { sortKeys: true })
}

/**
 * Whether two JSON values are equal, object keys in any order: what `canonicalJson` strings
 * would say, without building them (the loop guard runs it on every call). Recursive while the
 * values are shallow (a small function V8 inlines into the loop guard's); past MAX_JSON_DEPTH it
 * goes on with an explicit stack, so any depth is safe.
 */
export function sameJson(a: unknown, b: unknown): boolean {
  return sameShallow(a, b, 0)
}

function sameShallow(a: unknown, b: unknown, depth: number): boolean {
  if (a === b) return true
  if (!bothObjects(a, b)) return false
  if (depth >= MAX_JSON_DEPTH) return sameDeep(a, b)
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false
    for (let i = 0; i < a.length; i++) {
      const va: unknown = a[i]
      const vb: unknown = b[i]
      if (va !== vb && (typeof va !== 'object' || !sameShallow(va, vb, depth + 1))) return false
    }
    return true
  }
  if (Array.isArray(b)) return false
  const ra = a as Record<string, unknown>
  const rb = b as Record<string, unknown>
  let count = 0
  for (const key in ra) {
    const va = ra[key]
    if (va === undefined || !Object.hasOwn(ra, key)) continue
    count++
    if (!Object.hasOwn(rb, key)) return false
    // Unequal values are looked into only when they are objects: arguments are mostly flat, and
    // then no call recurses (nor is the recursion compiled into the loop guard).
    const vb = rb[key]
    if (va !== vb && (typeof va !== 'object' || !sameShallow(va, vb, depth + 1))) return false
  }
  for (const key in rb) if (Object.hasOwn(rb, key) && rb[key] !== undefined) count--
  return count === 0
}

/** `sameJson` without recursion, for values nested deeper than MAX_JSON_DEPTH. */
function sameDeep(a: unknown, b: unknown): boolean {
  // Pairs still to compare (x, y, x, y, ...), instead of recursion: the values may nest at any
  // depth. Made only when a pair of objects or arrays nests, so flat arguments allocate nothing.
  let pairs: unknown[] | undefined
  let x = a
  let y = b
  for (;;) {
    if (x !== y) {
      if (!bothObjects(x, y)) return false
      if (Array.isArray(x)) {
        if (!Array.isArray(y) || x.length !== y.length) return false
        for (let i = 0; i < x.length; i++) {
          const vx: unknown = x[i]
          const vy: unknown = y[i]
          if (vx === vy) continue
          if (!bothObjects(vx, vy)) return false
          ;(pairs ??= []).push(vx, vy)
        }
      } else {
        if (Array.isArray(y)) return false
        const rx = x as Record<string, unknown>
        const ry = y as Record<string, unknown>
        let count = 0
        for (const key in rx) {
          const vx = rx[key]
          if (!Object.hasOwn(rx, key) || vx === undefined) continue
          count++
          if (!Object.hasOwn(ry, key)) return false
          const vy = ry[key]
          if (vx === vy) continue
          if (!bothObjects(vx, vy)) return false
          ;(pairs ??= []).push(vx, vy)
        }
        for (const key in ry) if (Object.hasOwn(ry, key) && ry[key] !== undefined) count--
        if (count !== 0) return false
      }
    }
    if (!pairs?.length) return true
    y = pairs.pop()
    x = pairs.pop()
  }
}

/** Two values that are unequal unless both are objects (or arrays) with equal contents. */
function bothObjects(x: unknown, y: unknown): boolean {
  return typeof x === 'object' && typeof y === 'object' && x !== null && y !== null
}

/** Hex SHA-256 of the canonical JSON of a tool call: what an approval is bound to. */
export async function argsHash(name: string, args: Record<string, unknown>): Promise<string> {
  return sha256Hex(canonicalJson({ name, args }))
}
