import { sha256Hex } from '../security/sha256'
import { stringifyJson } from '../validation/json-walk'

/**
 * JSON with object keys sorted at every depth: equal values give equal strings. Written without
 * recursion: arguments and request bodies come from callers and models, at any depth.
 */
export function canonicalJson(value: unknown): string {
  return stringifyJson(value, { sortKeys: true })
}

/**
 * Whether two JSON values are equal, object keys in any order: what `canonicalJson` strings
 * would say, without building them (the loop guard runs it on every call).
 */
export function sameJson(a: unknown, b: unknown): boolean {
  // Pairs still to compare, instead of recursion (the values may nest at any depth).
  const pairs: [unknown, unknown][] = [[a, b]]
  while (pairs.length) {
    const [x, y] = pairs.pop()!
    if (x === y) continue
    if (typeof x !== 'object' || typeof y !== 'object' || x === null || y === null) return false
    if (Array.isArray(x)) {
      if (!Array.isArray(y) || x.length !== y.length) return false
      for (let i = 0; i < x.length; i++) pairs.push([x[i], y[i]])
      continue
    }
    if (Array.isArray(y)) return false
    const rx = x as Record<string, unknown>
    const ry = y as Record<string, unknown>
    let count = 0
    for (const key in rx) {
      if (!Object.hasOwn(rx, key) || rx[key] === undefined) continue
      count++
      if (!Object.hasOwn(ry, key)) return false
      pairs.push([rx[key], ry[key]])
    }
    for (const key in ry) if (Object.hasOwn(ry, key) && ry[key] !== undefined) count--
    if (count !== 0) return false
  }
  return true
}

/** Hex SHA-256 of the canonical JSON of a tool call: what an approval is bound to. */
export async function argsHash(name: string, args: Record<string, unknown>): Promise<string> {
  return sha256Hex(canonicalJson({ name, args }))
}
