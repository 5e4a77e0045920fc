import { expect } from 'vitest'
import type { FakeOpenAI } from './fake-openai'
import type { Outbound } from './outbound'

/**
 * The check every harness runs after every test: `fetch` is restored, no request went to a host
 * the test did not set up, and the fake provider refused nothing the test did not take (a
 * refused request is one the real API would have answered with a 4xx: a wrong key, a malformed
 * body, a reply the script did not have).
 */
export function verifyFakes(outbound: Outbound, ...providers: FakeOpenAI[]): void {
  outbound.restore()
  for (const provider of providers) {
    expect(provider.untakenViolations(), 'requests the fake provider refused').toEqual([])
  }
}
