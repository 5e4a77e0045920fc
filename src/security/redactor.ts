/**
 * A redactor: a pure function that replaces given secret values (and token-shaped strings) with
 * `[redacted]`. The service builds one from its configured secrets (redact.ts); a `react()`
 * caller builds one from its own.
 */
import { OPENAI_KEY_PATTERN } from '../validation/patterns'

/** Takes secrets out of a text. */
export type Redactor = (text: string) => string

/** What a secret becomes. */
export const REDACTED = '[redacted]'

/**
 * Values shorter than this are not looked for: they would match ordinary words and numbers.
 * The configuration refuses a secret this short (`shortSecrets`), so none is ever configured.
 */
export const MIN_SECRET_LENGTH = 8

// Slack tokens (xoxb-, xoxp-, xapp-…), whoever's they are; OpenAI keys: OPENAI_KEY_PATTERN.
const SLACK_TOKEN = /\bx(?:ox[abprs]|app)-[A-Za-z0-9-]{6,}/g

/**
 * A redactor for `secrets`: each is replaced by `[redacted]` as it is, JSON-escaped and
 * URL-encoded (the forms an echo takes in a JSON body or a query string), longest first, in one
 * pass; then token-shaped strings. Pure: the same secrets give the same output.
 */
export function createRedactor(secrets: Iterable<string>): Redactor {
  const forms = new Set<string>()
  for (const secret of secrets) {
    if (secret.length < MIN_SECRET_LENGTH) continue
    forms.add(secret)
    forms.add(JSON.stringify(secret).slice(1, -1))
    forms.add(encodeURIComponent(secret))
  }
  const exact = forms.size
    ? new RegExp(
        [...forms]
          .sort((a, b) => b.length - a.length)
          .map(escapeRegExp)
          .join('|'),
        'g',
      )
    : undefined
  return (text) => {
    const out = exact ? text.replace(exact, REDACTED) : text
    return out.replace(OPENAI_KEY_PATTERN, REDACTED).replace(SLACK_TOKEN, REDACTED)
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

/**
 * A redactor that also finds each secret split by whitespace or escaped line breaks (`\n` in
 * JSON) between any two of its characters: an answer that wraps a key over lines, or spaces it
 * out, still gives it up. For text about to leave the service (the `secrets` guardrail,
 * docs/guardrails.md), on top of `createRedactor`'s forms.
 */
export function createSplitRedactor(secrets: Iterable<string>): Redactor {
  const whole = [...new Set(secrets)].filter((s) => s.length >= MIN_SECRET_LENGTH)
  const plain = createRedactor(whole)
  if (!whole.length) return plain
  const gap = String.raw`(?:\s|\\[nrt])*`
  const split = new RegExp(
    whole
      .sort((a, b) => b.length - a.length)
      .map((secret) => [...secret].map(escapeRegExp).join(gap))
      .join('|'),
    'g',
  )
  return (text) => plain(text).replace(split, REDACTED)
}
