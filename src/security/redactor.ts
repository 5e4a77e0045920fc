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
