/**
 * Where the configured secrets of an environment are: every value edgeloop holds that nobody may
 * be shown, whatever the setting that holds it is called. A new kind of secret is one line in
 * SECRET_SOURCES. Each source reads the raw environment and never throws: a setting that does
 * not parse (the configuration check reports it) still gives up the secrets it can.
 */
import { MIN_SECRET_LENGTH } from './redactor'

/** A configured secret: the setting that holds it and its value. */
export interface SecretValue {
  setting: string
  value: string
}

type Env = Readonly<Record<string, unknown>>
type SecretSource = (env: Env) => SecretValue[]

/** The secrets edgeloop itself reads, by name. */
const NAMED = [
  'API_TOKEN',
  'WEBHOOK_SECRET',
  'OPENAI_API_KEY',
  'SLACK_SIGNING_SECRET',
  'SLACK_BOT_TOKEN',
  'MCP_TOKEN_KEY',
  'MCP_TOKEN_KEY_PREVIOUS',
  'MCP_SESSION_SECRET',
]
/** Any other setting named like a secret (a one-file tool's key, an MCP token named so). */
const SECRET_LIKE_NAME = /(TOKEN|SECRET|PASSWORD|API_KEY)$/
/** edgeloop's own settings that are named like a secret and hold none (a count, not a token). */
const NOT_SECRET_SETTINGS = new Set(['EVENT_STREAMS_PER_TOKEN', 'SERVED_CALLS_PER_TOKEN'])
/** Values that mean "no secret" (a keyless local provider). */
const NOT_SECRETS = new Set(['none'])

const SECRET_SOURCES: readonly SecretSource[] = [
  (env) => NAMED.flatMap((name) => setting(env, name)),
  (env) =>
    Object.keys(env)
      .filter((n) => SECRET_LIKE_NAME.test(n) && !NOT_SECRET_SETTINGS.has(n))
      .flatMap((n) => setting(env, n)),
  (env) => mcpTokenSecrets(env).flatMap((name) => setting(env, name)),
  (env) => headerValues(env, 'OTEL_EXPORTER_OTLP_HEADERS'),
]

/** Every configured secret of `env`, each once (the first setting that holds it names it). */
export function secretValues(env: Env): SecretValue[] {
  const seen = new Map<string, SecretValue>()
  for (const source of SECRET_SOURCES) {
    for (const secret of source(env)) if (!seen.has(secret.value)) seen.set(secret.value, secret)
  }
  return [...seen.values()]
}

function setting(env: Env, name: string): SecretValue[] {
  const value = env[name]
  if (typeof value !== 'string') return []
  const trimmed = value.trim()
  return trimmed && !NOT_SECRETS.has(trimmed) ? [{ setting: name, value: trimmed }] : []
}

/**
 * The settings MCP_SERVERS names as secrets (`token_secret`, `client_secret_secret`,
 * `private_key_secret`), read loosely (whatever else is wrong).
 */
function mcpTokenSecrets(env: Env): string[] {
  const raw = env.MCP_SERVERS
  if (typeof raw !== 'string') return []
  let list: unknown
  try {
    list = JSON.parse(raw)
  } catch {
    return []
  }
  if (!Array.isArray(list)) return []
  const fields = ['token_secret', 'client_secret_secret', 'private_key_secret']
  return list.flatMap((entry: unknown) =>
    fields.flatMap((field) => {
      const name = (entry as Record<string, unknown> | null)?.[field]
      return typeof name === 'string' ? [name] : []
    }),
  )
}

/**
 * The values of a `key=value,key=value` header list (the OpenTelemetry exporter's format). Such
 * a list also holds plain labels (a dataset, a tenant): a value shorter than a secret can be is
 * taken for one of those, not refused.
 */
function headerValues(env: Env, name: string): SecretValue[] {
  const raw = env[name]
  if (typeof raw !== 'string') return []
  return raw.split(',').flatMap((pair) => {
    const at = pair.indexOf('=')
    const raw = at < 0 ? '' : pair.slice(at + 1).trim()
    // As written (percent-encoded) and decoded, as an exporter sends it.
    return [...new Set([raw, decodeOr(raw)])]
      .filter((value) => value.length >= MIN_SECRET_LENGTH)
      .map((value) => ({ setting: name, value }))
  })
}

function decodeOr(text: string): string {
  try {
    return decodeURIComponent(text)
  } catch {
    return text
  }
}
