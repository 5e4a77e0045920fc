/**
 * An agent snapshot's version: 12 hex digits of a 64-bit FNV-1a hash of the canonical JSON of
 * what the run took from its agent. Short enough to show, stable across isolates, and synchronous
 * (a migration computes it for saved runs). Not a security hash: it tells versions apart, it does
 * not protect them.
 *
 * Every run computes one when it starts, over instructions that may run to many KiB: hashing them
 * whole was most of an agent run's extra CPU (npm run bench -- kernel, the +agent cases). FNV-1a
 * reads its input in order, and canonical JSON sorts keys, so `"instructions"` (which sorts before
 * the snapshot's other keys) comes first: the hash state after it is kept per instructions text,
 * with the versions of the (short) rests seen after it, so a run of a known agent only writes
 * the rest's canonical JSON. The digits are the same as hashing the whole text.
 */
import { canonicalJson, sameJson } from './canonical'
import { MAX_JSON_DEPTH } from '../validation/json-walk'

/** The 64-bit FNV-1a state as two 32-bit halves (BigInt arithmetic is several times slower). */
type State = { hi: number; lo: number }

const OFFSET_BASIS: State = { hi: 0xcbf29ce4, lo: 0x84222325 }

const TWO_TO_MINUS_32 = 2 ** -32

function fnv(text: string, from: State): State {
  let { hi, lo } = from
  // FNV prime 2^40 + 0x1b3: h * prime = h * 0x1b3 + (h << 40), both mod 2^64.
  for (let i = 0; i < text.length; i++) {
    lo = (lo ^ text.charCodeAt(i)) >>> 0
    const low = lo * 0x1b3
    const next = low >>> 0
    // The carry out of the low half: exact, as both are integers below 2^53 (a multiply by 2^-32
    // instead of a division and a floor, per character).
    hi = (hi * 0x1b3 + (low - next) * TWO_TO_MINUS_32 + ((lo << 8) >>> 0)) >>> 0
    lo = next
  }
  return { hi, lo }
}

function digits({ hi, lo }: State): string {
  return (hi.toString(16).padStart(8, '0') + lo.toString(16).padStart(8, '0')).slice(0, 12)
}

/** Instructions shorter than this are hashed each time: the cache would cost more than it saves. */
const CACHED_FROM = 256
/** Distinct instructions kept: a deployment has a few agents; ad-hoc ones come and go. */
const CACHE_SIZE = 64
/** Per instructions text: the state after it, and the versions of the rests seen with it. */
const cache = new Map<string, { state: State; versions: Map<string, string> }>()

/** The version of `{"instructions":<text>` followed by `tail`, cached. */
function cachedVersion(instructions: string, tail: string): string {
  let entry = cache.get(instructions)
  if (!entry) {
    if (cache.size >= CACHE_SIZE) cache.clear()
    const state = fnv(`{"instructions":${canonicalJson(instructions)}`, OFFSET_BASIS)
    entry = { state, versions: new Map() }
    cache.set(instructions, entry)
  }
  let version = entry.versions.get(tail)
  if (version === undefined) {
    if (entry.versions.size >= CACHE_SIZE) entry.versions.clear()
    version = digits(fnv(tail, entry.state))
    entry.versions.set(tail, version)
  }
  return version
}

/** FNV-1a 64 of `canonicalJson(content)`, as its first 12 hex digits. */
export function agentVersion(content: unknown): string {
  for (const seen of SEEN) if (sameJson(seen.content, content)) return seen.version
  const version = computedVersion(content)
  if (SEEN.length >= SEEN_SIZE) SEEN.pop()
  // A copy of its own (what a caller does to its objects later cannot change it): the same
  // canonical JSON, so what `sameJson` finds equal to it has this version.
  SEEN.unshift({ content: JSON.parse(canonicalJson(content)) as unknown, version })
  return version
}

/**
 * The last contents versioned, newest first. Every run versions its agent when it starts, most
 * with a content seen before; `sameJson` finds one without writing any text, where the JSON
 * text of the content (the key of the caches below) cost 20–60 µs a run in
 * `npm run bench -- kernel` (docs/development.md#kernel-performance). `sameJson` says equal only
 * where canonical JSON does (canonical.ts), so a match has the same version.
 */
const SEEN: { content: unknown; version: string }[] = []
const SEEN_SIZE = 16

function computedVersion(content: unknown): string {
  if (typeof content === 'object' && content !== null && !Array.isArray(content)) {
    const { instructions, ...rest } = content as Record<string, unknown>
    // Canonical JSON leaves out undefined values and sorts keys: the instructions come first
    // when no other key sorts before theirs.
    const first = Object.keys(rest).every((k) => k > 'instructions' || rest[k] === undefined)
    if (typeof instructions === 'string' && instructions.length >= CACHED_FROM && first) {
      const others = remembered(TAILS, rest, canonicalJson)
      return cachedVersion(instructions, others === '{}' ? '}' : `,${others.slice(1)}`)
    }
  }
  return remembered(VERSIONS, content, (c) => digits(fnv(canonicalJson(c), OFFSET_BASIS)))
}

/**
 * What `compute` gave for plain JSON data of the same `JSON.stringify` text, computed once. Every
 * run computes its agent's version when it starts, and canonical JSON (a sorted copy written
 * piece by piece) cost several µs a run, more than a 20-step run's steps spend on anything
 * else of the run's (npm run bench -- kernel); `JSON.stringify` is a fraction of that. Equal
 * texts are equal values for plain data only, so anything else is computed every time.
 */
function remembered(cache: Map<string, string>, value: unknown, compute: (v: unknown) => string) {
  const key = plainJsonText(value)
  if (key === undefined) return compute(value)
  let found = cache.get(key)
  if (found === undefined) {
    if (cache.size >= CACHE_SIZE) cache.clear()
    found = compute(value)
    cache.set(key, found)
  }
  return found
}

/** Versions of the snapshots without long instructions, and canonical rests of the others. */
const VERSIONS = new Map<string, string>()
const TAILS = new Map<string, string>()

/**
 * `JSON.stringify(value)` when it is plain JSON data (objects of `Object.prototype` or none,
 * arrays, scalars) nesting at most MAX_JSON_DEPTH deep with no `toJSON`: data whose text says
 * what the value is. Otherwise undefined (a Date, a boxed string, a class instance).
 */
function plainJsonText(value: unknown): string | undefined {
  let stack: unknown[] | undefined
  let v = value
  let depth = 0
  for (;;) {
    if (v !== null && typeof v === 'object') {
      if (depth > MAX_JSON_DEPTH) return undefined
      const proto: unknown = Object.getPrototypeOf(v)
      const array = Array.isArray(v)
      if (!array && proto !== Object.prototype && proto !== null) return undefined
      if (typeof (v as { toJSON?: unknown }).toJSON === 'function') return undefined
      for (const child of array ? (v as unknown[]) : Object.values(v as object)) {
        if (child !== null && typeof child === 'object') (stack ??= []).push(child, depth + 1)
      }
    }
    if (!stack?.length) return JSON.stringify(value)
    depth = stack.pop() as number
    v = stack.pop()
  }
}
