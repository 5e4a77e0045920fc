import type { Guardrail } from './guardrail'
import { rewriteVerdict } from './text-values'

/**
 * The shipped `secrets` guardrail (docs/guardrails.md#secrets): the deployment's secrets, found by
 * value with `redact` (the service's redactor, which also finds a secret split across lines), are
 * replaced in the answer before it goes out.
 */
export function secretsGuardrail(redact: (text: string) => string, name = 'secrets'): Guardrail {
  return {
    name,
    check: (value) => rewriteVerdict(value, redact, 'secrets redacted'),
  }
}
