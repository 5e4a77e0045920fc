/**
 * Named API tokens with scopes. `API_TOKENS` holds, per token, a name, the SHA-256
 * of the token (never the token) and its scopes; the legacy `API_TOKEN` is a full-access token
 * named `api`. A decision or a cancel is recorded under the token's name, never a caller's field.
 */
import { timingSafeEqual } from './hmac'
import { sha256Hex } from './sha256'
import { SHA256_HEX_PATTERN } from '../validation/patterns'

export const SCOPES = [
  'runs:write',
  'runs:read',
  'approvals:write',
  'runs:delete',
  'service:read',
] as const
export type Scope = (typeof SCOPES)[number]

/**
 * Which runs a token reaches: `all` (the default), or `own`: only the runs it started, their
 * follow-ups and their children (docs/security.md#who-sees-which-runs).
 */
export const RUN_VISIBILITIES = ['all', 'own'] as const
export type RunVisibility = (typeof RUN_VISIBILITIES)[number]

export interface ApiToken {
  name: string
  /** Lower-case hex SHA-256 of the token. */
  sha256: string
  scopes: Scope[]
  runs: RunVisibility
}

/** The name the legacy `API_TOKEN` goes by. */
export const LEGACY_TOKEN_NAME = 'api'

// Lower case, so a token's name can never be mistaken for a Slack user id (U…/W…), and no `:`,
// so it cannot pose as `slack:<user>` or another principal; `webhook` and `system` are taken.
const NAME = /^[a-z][a-z0-9_.-]{0,63}$/
const RESERVED = new Set(['webhook', 'system'])

const cache = new Map<string, ApiToken[]>()

/**
 * Parses `API_TOKENS` (JSON array of `{ name, sha256, scopes, runs? }`) plus `API_TOKEN`; throws a
 * TypeError naming the bad entry and what to write instead.
 */
export function parseApiTokens(json: string | undefined, legacy: string | undefined): ApiToken[] {
  const key = `${json ?? ''}\u0000${legacy ? 'legacy' : ''}`
  const cached = cache.get(key)
  if (cached) return cached
  const tokens = json?.trim() ? parseList(json) : []
  if (legacy?.trim()) {
    if (tokens.some((t) => t.name === LEGACY_TOKEN_NAME)) {
      throw new TypeError(
        `API_TOKENS: the name "${LEGACY_TOKEN_NAME}" belongs to API_TOKEN while it is set; rename the entry or remove API_TOKEN`,
      )
    }
    tokens.push({ name: LEGACY_TOKEN_NAME, sha256: '', scopes: [...SCOPES], runs: 'all' })
  }
  if (cache.size > 8) cache.clear()
  cache.set(key, tokens)
  return tokens
}

function parseList(json: string): ApiToken[] {
  let value: unknown
  try {
    value = JSON.parse(json)
  } catch (err) {
    throw new TypeError(`API_TOKENS must be JSON: ${(err as Error).message}`)
  }
  if (!Array.isArray(value)) {
    throw new TypeError(
      'API_TOKENS must be a JSON array like [{"name":"ci","sha256":"<hex>","scopes":["runs:write"]}]',
    )
  }
  const seen = new Set<string>()
  return value.map((entry: unknown, i) => {
    const where = `API_TOKENS[${i}]`
    if (!entry || typeof entry !== 'object' || Array.isArray(entry)) {
      throw new TypeError(`${where} must be an object with name, sha256 and scopes`)
    }
    const { name, sha256, scopes, runs = 'all', ...rest } = entry as Record<string, unknown>
    const extra = Object.keys(rest)
    if (extra.includes('token')) {
      throw new TypeError(
        `${where} holds the token itself; store only its SHA-256 (printf %s "$TOKEN" | sha256sum)`,
      )
    }
    if (extra.length) throw new TypeError(`${where} has unknown fields ${extra.join(', ')}`)
    if (typeof name !== 'string' || !NAME.test(name) || RESERVED.has(name)) {
      throw new TypeError(
        `${where}.name ${JSON.stringify(name)} must be lower-case letters, digits, "_", "." or "-" ` +
          '(starting with a letter, at most 64) and not "webhook" or "system"',
      )
    }
    if (seen.has(name)) throw new TypeError(`${where}.name "${name}" is used twice`)
    seen.add(name)
    if (typeof sha256 !== 'string' || !SHA256_HEX_PATTERN.test(sha256.toLowerCase())) {
      throw new TypeError(
        `${where}.sha256 must be 64 hex characters, the SHA-256 of the token (printf %s "$TOKEN" | sha256sum)`,
      )
    }
    if (
      !Array.isArray(scopes) ||
      scopes.length === 0 ||
      !scopes.every((s) => SCOPES.includes(s as Scope))
    ) {
      throw new TypeError(
        `${where}.scopes must be a non-empty list of ${SCOPES.join(', ')}; got ${JSON.stringify(scopes)}`,
      )
    }
    if (!RUN_VISIBILITIES.includes(runs as RunVisibility)) {
      throw new TypeError(
        `${where}.runs must be "all" (every run, the default) or "own" (only the runs this token started); got ${String(JSON.stringify(runs)).slice(0, 60)}`,
      )
    }
    return {
      name,
      sha256: sha256.toLowerCase(),
      scopes: [...new Set(scopes as Scope[])],
      runs: runs as RunVisibility,
    }
  })
}

/**
 * The SHA-256 of a presented token, remembered per isolate: the same few tokens come with every
 * request, and hashing each again was measurable per request (bench/service-cost.mjs). Bounded:
 * a flood of wrong tokens empties it, it never grows past MAX_DIGESTS.
 */
async function tokenDigest(presented: string): Promise<string> {
  let digest = DIGESTS.get(presented)
  if (digest === undefined) {
    digest = await sha256Hex(presented)
    if (DIGESTS.size >= MAX_DIGESTS) DIGESTS.clear()
    DIGESTS.set(presented, digest)
  }
  return digest
}
const DIGESTS = new Map<string, string>()
const MAX_DIGESTS = 64

/** The token `presented` matches, or undefined. Every entry is compared, in constant time. */
export async function findToken(
  tokens: readonly ApiToken[],
  presented: string,
  legacy: string | undefined,
): Promise<ApiToken | undefined> {
  const digest = await tokenDigest(presented)
  let found: ApiToken | undefined
  for (const token of tokens) {
    const match =
      token.name === LEGACY_TOKEN_NAME && token.sha256 === ''
        ? timingSafeEqual(presented, legacy ?? '')
        : timingSafeEqual(digest, token.sha256)
    if (match && !found) found = token
  }
  return found
}
