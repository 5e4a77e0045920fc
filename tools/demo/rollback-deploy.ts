import * as z from 'zod/mini'
import { defineTool } from '../../src/kernel/tool'
import { VERSIONS } from './fixtures'
import { knownService } from './known-service'

/**
 * DEMO: pretends to roll a service back. It checks the request against the fixture versions
 * and reports what a real rollback would have done; it touches no network and keeps no state,
 * so it says the same thing however often it is approved.
 */
export const rollbackDeploy = defineTool({
  name: 'rollback_deploy',
  description:
    'DEMO tool (no real deploy happens). Roll a service back to an earlier released version. ' +
    'Use it only once the evidence points at the current deploy; a person must approve it. ' +
    'service: order, payments, inventory or gateway. to_version: an earlier version of that ' +
    'service, e.g. "v2.13.2" (see the changelog). reason: one sentence with the evidence.',
  params: z.strictObject({
    service: z.string().check(z.describe('Service to roll back')),
    to_version: z.string().check(z.describe('Earlier version to return to, e.g. "v2.13.2"')),
    reason: z.string().check(z.minLength(1), z.describe('Why, with the evidence, in one sentence')),
  }),
  returns: 'A confirmation such as "rolled back order from v2.14.0 to v2.13.2".',
  sideEffect: true,
  idempotent: false,
  handler: ({ service: name, to_version, reason }) => {
    const service = knownService(name)
    const versions = VERSIONS[service]
    const current = versions.at(-1)!
    const earlier = versions.slice(0, -1).reverse()
    const index = versions.indexOf(to_version.trim())
    if (index === versions.length - 1) {
      throw new Error(
        `${service} already runs ${current}; pick an earlier version: ${earlier.join(', ')}`,
      )
    }
    if (index < 0) {
      throw new Error(
        `${service} has no version "${to_version}"; earlier versions are ${earlier.join(', ')} ` +
          `(it runs ${current})`,
      )
    }
    return (
      `rolled back ${service} from ${current} to ${versions[index]} ` +
      `(DEMO: nothing was deployed). Reason recorded: ${reason.trim()}`
    )
  },
})
