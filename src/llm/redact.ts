/** Keeps secrets out of error messages, traces and logs. */
import { OPENAI_KEY_PATTERN } from '../validation/patterns'

/**
 * Replaces every occurrence of `secret` and of `sk-…`-looking keys with `[redacted]`: those too
 * when they are not the configured key, e.g. a provider echoing another key back.
 */
export function redactSecrets(text: string, secret?: string): string {
  // A very short "key" would redact ordinary words; real keys are long.
  const exact = secret && secret.length >= 6 ? text.split(secret).join('[redacted]') : text
  return exact.replace(OPENAI_KEY_PATTERN, '[redacted]')
}
