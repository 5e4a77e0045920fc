import { SERVICES, type Service } from './fixtures'

/** The demo service named `name`, or an error listing the ones that exist. */
export function knownService(name: string): Service {
  const service = SERVICES.find((s) => s === name.trim().toLowerCase())
  if (!service) {
    throw new Error(`unknown service "${name}"; the services are ${SERVICES.join(', ')}`)
  }
  return service
}
