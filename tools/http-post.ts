import * as z from 'zod/mini'
import { defineTool, type Tool } from '../src/kernel/tool'
import { flag } from '../src/settings/setting'
import { defineConfiguredTool } from './configured-tool'
import { allowlistProblem, checkUrl, HTTP_ALLOWLIST } from './http-allowlist'
import { resolveHttpOptions, type HttpToolOptions } from './http-options'
import { sendRequest } from './http-request'
import { describeResponse } from './http-response'

/**
 * POSTs a JSON body to an allowlisted host. It changes the world, so the confirm policy decides
 * before it runs; it sends `<run id>:<call id>` as `Idempotency-Key`, so that a server that
 * deduplicates by it can make a retry harmless (see `idempotent`).
 * Redirects are reported, never followed: re-sending a POST elsewhere is a new side effect.
 */
export function createHttpPostTool(
  options: HttpToolOptions & {
    /**
     * Declare it idempotent only when every allowlisted host deduplicates by `Idempotency-Key`:
     * then a POST interrupted by a crash is sent again with the same key. Otherwise (the default)
     * the resumed run reports its outcome as unknown and does not send it twice.
     */
    idempotent?: boolean
  },
): Tool {
  const { allowlist, maxBytes, timeoutMs } = resolveHttpOptions('http_post', options)
  return defineTool({
    name: 'http_post',
    description:
      'Send a JSON POST request that creates or changes something (a webhook, an API action). ' +
      'Only use it when the task asks for that change; to read, use http_get. Allowed hosts: ' +
      `${allowlist.entries.join(', ')} ("*." allows any subdomain). ` +
      'url: absolute http:// or https:// URL without user:password. body: the JSON object to ' +
      'send. Redirects are not followed. A 4xx or 5xx is a normal result: read the status line.',
    params: z.strictObject({
      url: z.string().check(z.describe('Absolute URL on an allowed host')),
      body: z
        .record(z.string(), z.unknown())
        .check(z.describe('The JSON object to send as the request body')),
    }),
    returns:
      'The status line and content type, e.g. "HTTP 201 Created (application/json)", then a ' +
      'blank line and the response body as text.',
    sideEffect: true,
    idempotent: options.idempotent ?? false,
    timeoutMs,
    // Before anyone is asked to approve: a call to a host outside the allowlist never reaches a
    // person (and the handler checks again, for redirects and as the last line).
    check: ({ url }) => allowlistProblem(allowlist, url),
    handler: async ({ url, body }, ctx) => {
      const target = checkUrl(allowlist, url)
      const res = await sendRequest(
        target,
        {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'idempotency-key': ctx.idempotencyKey,
            accept: 'application/json, text/plain;q=0.9, */*;q=0.1',
          },
          body: JSON.stringify(body),
        },
        ctx.signal,
      )
      const location = res.headers.get('location')
      const notes =
        res.status >= 300 && res.status < 400 && location !== null
          ? [
              `Redirect to ${absolute(location, target)} was not followed (http_post never follows redirects)`,
            ]
          : []
      return describeResponse(res, target, { maxBytes, signal: ctx.signal, notes })
    },
  })
}

function absolute(location: string, base: URL): string {
  try {
    return new URL(location, base).href
  } catch {
    return location // shown to the model as sent; nothing is requested with it
  }
}

/**
 * http_post as the catalog builds it: the hosts come from HTTP_ALLOWLIST, and it is declared
 * idempotent only with HTTP_POST_IDEMPOTENT=true.
 */
export const httpPost = defineConfiguredTool({
  name: 'http_post',
  settings: { HTTP_ALLOWLIST, HTTP_POST_IDEMPOTENT: flag() },
  build: (s) =>
    createHttpPostTool({ allowlist: s.HTTP_ALLOWLIST, idempotent: s.HTTP_POST_IDEMPOTENT }),
})
