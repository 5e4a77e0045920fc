import { ConfigError } from '../errors/config-error'
import { MIN_SECRET_LENGTH, shortSecrets } from '../security/redact'
import type { EnvRecord } from '../settings/setting'

/**
 * Refuses a configured secret shorter than MIN_SECRET_LENGTH. Secrets are redacted by value, and
 * a value that short would be found in ordinary words and numbers, so it is not looked for; the
 * service does not run with a secret it cannot keep out of what runs store and show (and one that
 * short is guessable anyway). The ConfigError names every such setting and never its value.
 */
export function requireLongSecrets(env: EnvRecord): void {
  const short = shortSecrets(env)
  if (!short.length) return
  const which = short.length > 1 ? `${short.join(', ')} are` : `${short[0]} is`
  throw new ConfigError(
    short.join(', '),
    `${which} shorter than ${MIN_SECRET_LENGTH} characters: too short to be told apart from ` +
      'ordinary text, so it could not be redacted from what runs store and show; use a longer secret',
  )
}
