/** The Worker's own fetch handler called with some settings changed (for the configuration tests). */
import { env } from 'cloudflare:workers'
import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test'
import worker from '../../src/index'
import type { Env } from '../../src/env'
import { ORIGIN } from './harness'

/**
 * `fetch` of the Worker under `settings` (a var set to undefined is unset). Durable Objects keep
 * the test project's settings: use this for what the routes decide, not what a run does.
 */
export async function fetchWith(
  settings: Partial<Record<keyof Env, string | undefined>>,
  path: string,
  init: RequestInit = {},
): Promise<Response> {
  const ctx = createExecutionContext()
  const res = await worker.fetch(
    new Request(`${ORIGIN}${path}`, init) as Request<unknown, IncomingRequestCfProperties>,
    { ...(env as Env), ...settings } as Env,
    ctx,
  )
  await waitOnExecutionContext(ctx)
  return res
}
