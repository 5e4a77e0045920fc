import type { ServiceConfig } from '../../config'
import { forbiddenAddress, writtenHost } from '../../security/private-address'
import { StartError } from './start-error'

/**
 * A callback goes where the caller says, from inside our network: never to loopback, private,
 * link-local or metadata addresses or local names unless CALLBACK_ALLOWLIST lists the host (and
 * port); plain http only for entries written `http://host`. Each refusal names its rule.
 */
export function checkCallbackUrl(config: ServiceConfig, value: string): void {
  const url = new URL(value)
  const refuse = (rule: string, message: string): never => {
    throw new StartError('invalid', 'invalid_callback_url', message, { rule, host: url.host })
  }
  if (url.username || url.password) {
    refuse('credentials', 'callback_url must not contain credentials')
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    refuse('scheme', `callback_url must be https, not ${url.protocol}`)
  }
  const listed = config.security.callbackHosts
  if (listed?.allows(url)) return
  if (url.protocol === 'http:') {
    refuse(
      'scheme',
      'callback_url must be https (plain http only for hosts listed as "http://host:port" in CALLBACK_ALLOWLIST)',
    )
  }
  if (listed) {
    refuse('allowlist', `callback_url host ${url.host} is not in CALLBACK_ALLOWLIST`)
  }
  const bad = forbiddenAddress(url, writtenHost(value))
  if (bad) {
    refuse(
      bad.rule,
      `callback_url host ${url.host} is refused (rule ${bad.rule}: ${bad.why}); ` +
        'list it in CALLBACK_ALLOWLIST if this server should call it',
    )
  }
}
