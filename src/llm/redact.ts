/** Keeps secrets out of error messages, traces and logs. */

// OpenAI-style secret keys (`sk-…`, `sk-proj-…`) even when they are not the configured key,
// e.g. a provider echoing another key back.
const SECRET_KEY_PATTERN = /\bsk-[A-Za-z0-9_-]{8,}/g

/** Replaces every occurrence of `secret` and of `sk-…`-looking tokens with `[redacted]`. */
export function redactSecrets(text: string, secret?: string): string {
  // A very short "key" would redact ordinary words; real keys are long.
  const exact = secret && secret.length >= 6 ? text.split(secret).join('[redacted]') : text
  return exact.replace(SECRET_KEY_PATTERN, '[redacted]')
}
