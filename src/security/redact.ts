/**
 * The one place secrets are taken out of what we store or log: every configured
 * secret, wherever it turns up (a Slack `error` echoing the bot token, a provider echoing its key,
 * a thrown message), plus anything shaped like an OpenAI or Slack token even when it is not ours.
 * `logEvent`, the outbox's `lastError` and a run's recorded error all pass through `redact`.
 */
import { OPENAI_KEY_PATTERN } from '../validation/patterns'

/** Settings that are secrets, by name, and any other setting named like one (MCP tokens…). */
const SECRET_NAMES = new Set([
  'API_TOKEN',
  'WEBHOOK_SECRET',
  'OPENAI_API_KEY',
  'SLACK_SIGNING_SECRET',
  'SLACK_BOT_TOKEN',
])
const SECRET_LIKE_NAME = /(TOKEN|SECRET|PASSWORD|API_KEY)$/
// Slack tokens (xoxb-, xoxp-, xapp-…), whoever's they are; OpenAI keys: OPENAI_KEY_PATTERN.
const SLACK_TOKEN = /\bx(?:ox[abprs]|app)-[A-Za-z0-9-]{6,}/g
// A secret this short would redact ordinary words; real ones are long.
const MIN_SECRET_LENGTH = 6

const OTLP_HEADERS = 'OTEL_EXPORTER_OTLP_HEADERS'

let secrets: readonly string[] = []
let seen: object | undefined

/** Learns the secrets of this Worker's environment (called once per env object). */
export function registerSecrets(env: object): void {
  if (seen === env) return
  seen = env
  const found = new Set(secrets)
  for (const [name, value] of Object.entries(env)) {
    if (typeof value !== 'string' || value.trim().length < MIN_SECRET_LENGTH) continue
    if (SECRET_NAMES.has(name) || SECRET_LIKE_NAME.test(name)) found.add(value.trim())
    // The OTLP headers are `key=value,…` (an API key, a Basic credential): each value is one.
    if (name === OTLP_HEADERS) {
      for (const pair of value.split(',')) {
        const secret = pair.slice(pair.indexOf('=') + 1).trim()
        if (pair.includes('=') && secret.length >= MIN_SECRET_LENGTH) {
          found.add(secret)
          found.add(safeDecode(secret))
        }
      }
    }
  }
  // Longest first, so a secret that contains another is replaced whole.
  secrets = [...found].sort((a, b) => b.length - a.length)
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text)
  } catch {
    return text
  }
}

/** `text` with every known secret and token-shaped string replaced by `[redacted]`. */
export function redact(text: string): string {
  let out = text
  for (const secret of secrets) out = out.split(secret).join('[redacted]')
  return out.replace(OPENAI_KEY_PATTERN, '[redacted]').replace(SLACK_TOKEN, '[redacted]')
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
