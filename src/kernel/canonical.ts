import { sha256Hex } from '../security/sha256'

/** JSON with object keys sorted at every depth: equal values give equal strings. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value))
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys)
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {}
    for (const key of Object.keys(value).sort()) {
      out[key] = sortKeys((value as Record<string, unknown>)[key])
    }
    return out
  }
  return value
}

/**
 * Whether two JSON values are equal, object keys in any order: what `canonicalJson` strings
 * would say, without building them (the loop guard runs it on every call).
 */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false
    return true
  }
  if (Array.isArray(b)) return false
  const ra = a as Record<string, unknown>
  const rb = b as Record<string, unknown>
  let count = 0
  for (const key in ra) {
    if (!Object.hasOwn(ra, key)) continue
    if (ra[key] === undefined) continue
    count++
    if (!Object.hasOwn(rb, key) || !sameJson(ra[key], rb[key])) return false
  }
  for (const key in rb) if (Object.hasOwn(rb, key) && rb[key] !== undefined) count--
  return count === 0
}

/** Hex SHA-256 of the canonical JSON of a tool call: what an approval is bound to. */
export async function argsHash(name: string, args: Record<string, unknown>): Promise<string> {
  return sha256Hex(canonicalJson({ name, args }))
}
