/**
 * The one place secrets are taken out of what edgeloop stores, streams, logs, exports or sends
 * to a model. Secrets are recognised by value, not by the name of their setting: every
 * configured secret (secret-values.ts: the named ones, every MCP `token_secret`, …) wherever it
 * turns up — a tool's observation or error, an MCP server's 401 body, a provider's error, a
 * thrown message — plus anything shaped like an OpenAI or Slack token even when it is not ours.
 * The kernel gets a `Redactor` through its deps; the service's logs, outbox errors and blocked
 * records use `redact`, the same function.
 */
import { createRedactor, createSplitRedactor, MIN_SECRET_LENGTH, type Redactor } from './redactor'
import { secretValues } from './secret-values'

export { createRedactor, MIN_SECRET_LENGTH, REDACTED, type Redactor } from './redactor'

/** The configured secrets that are too short to be looked for: `SETTING` names, for a 503. */
export function shortSecrets(env: object): string[] {
  return secretValues(env as Record<string, unknown>)
    .filter((s) => s.value.length < MIN_SECRET_LENGTH)
    .map((s) => s.setting)
}

let known = new Set<string>()
let current: Redactor = createRedactor([])
let split: Redactor | undefined
const registered = new WeakSet<object>()

/**
 * Learns the secrets of this Worker's environment (once per env object). Secrets of every env
 * seen stay known: redacting one too many is harmless, missing one is not.
 */
export function registerSecrets(env: object): void {
  if (registered.has(env)) return
  registered.add(env)
  const before = known.size
  known = new Set([...known, ...secretValues(env as Record<string, unknown>).map((s) => s.value)])
  if (known.size === before) return
  current = createRedactor(known)
  split = undefined
}

/**
 * `redact`, and each known secret found even when split by whitespace or line breaks (made on
 * first use: only the `secrets` guardrail needs it).
 */
export function redactAcrossLines(text: string): string {
  split ??= createSplitRedactor(known)
  return split(text)
}

/**
 * Learns secrets that are not settings: the OAuth tokens of an MCP connection, as they are read
 * or stored (runs/connections), so a server that echoes one shows `[redacted]`.
 */
export function learnSecrets(values: readonly (string | undefined)[]): void {
  const before = known.size
  for (const v of values) if (v && v.length >= MIN_SECRET_LENGTH) known.add(v)
  if (known.size !== before) current = createRedactor(known)
}

/** `text` with every known secret and token-shaped string replaced by `[redacted]`. */
export function redact(text: string): string {
  return current(text)
}

/** The redactor of `env`: `redact`, with env's secrets learnt. */
export function redactorFor(env: object): Redactor {
  registerSecrets(env)
  return redact
}

/** A JSON-ready value with every string in it redacted. */
export function redactDeep<T>(value: T): T {
  if (typeof value === 'string') return redact(value) as T
  if (Array.isArray(value)) return value.map(redactDeep) as T
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactDeep(v)])) as T
  }
  return value
}

/**
 * A JSON value with every secret in it redacted, through its serialized text (no walk over a
 * structure a third party chose; the JSON-escaped form of each secret is among those looked for).
 */
export function redactJson<T>(value: T): T {
  const text = JSON.stringify(value)
  if (text === undefined) return value
  const clean = redact(text)
  if (clean === text) return value
  try {
    return JSON.parse(clean) as T
  } catch {
    // A secret that looked like JSON syntax: redact value by value instead.
    return redactDeep(value)
  }
}
