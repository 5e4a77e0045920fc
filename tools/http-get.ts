import * as z from 'zod/mini'
import { defineTool, type Tool } from '../src/kernel/tool'
import { defineConfiguredTool } from './configured-tool'
import { allowlistProblem, checkUrl, HTTP_ALLOWLIST } from './http-allowlist'
import { resolveHttpOptions, type HttpToolOptions } from './http-options'
import { sendRequest } from './http-request'
import { describeResponse } from './http-response'

export const MAX_REDIRECTS = 5
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308])
const ACCEPT = 'text/html, application/json;q=0.9, text/plain;q=0.8, */*;q=0.1'

/**
 * A read-only GET limited to allowlisted hosts. Redirects are followed here, at most
 * `MAX_REDIRECTS`, each `Location` checked against the allowlist before it is requested, so a
 * redirect can never carry the request to a host nobody allowed.
 */
export function createHttpGetTool(options: HttpToolOptions): Tool {
  const { allowlist, maxBytes, timeoutMs } = resolveHttpOptions('http_get', options)
  return defineTool({
    name: 'http_get',
    description:
      'Fetch a web page or JSON API with a read-only GET request. Use it to read documentation, ' +
      'status pages or API resources on these hosts only: ' +
      `${allowlist.entries.join(', ')} ("*." allows any subdomain). ` +
      'url: an absolute http:// or https:// URL, without user:password. HTML comes back as ' +
      `readable text, JSON pretty-printed; binary files are refused; bodies over ${maxBytes} ` +
      'bytes are cut. A 404 or 500 is a normal result: read the status line.',
    params: z.object({
      url: z
        .string()
        .check(z.describe('Absolute URL on an allowed host, e.g. https://host/path?q=1')),
    }),
    returns:
      'The status line and content type, e.g. "HTTP 200 OK (application/json)", then a blank ' +
      'line and the body as text.',
    timeoutMs,
    // Before anyone is asked to approve: a call to a host outside the allowlist never reaches a
    // person (and the handler checks again, for redirects and as the last line).
    check: ({ url }) => allowlistProblem(allowlist, url),
    handler: async ({ url }, ctx) => {
      let current = checkUrl(allowlist, url)
      const notes: string[] = []
      for (let hops = 0; ; hops++) {
        const res = await sendRequest(current, { headers: { accept: ACCEPT } }, ctx.signal)
        const location = res.headers.get('location')
        if (!REDIRECT_STATUSES.has(res.status) || location === null) {
          return describeResponse(res, current, { maxBytes, signal: ctx.signal, notes })
        }
        await res.body?.cancel().catch(() => {})
        if (hops === MAX_REDIRECTS) {
          throw new Error(
            `${url} redirected more than ${MAX_REDIRECTS} times (last to ${location}); ` +
              'request the final URL directly',
          )
        }
        current = followable(current, location)
        notes.push(`Redirected (${res.status}) to ${current.href}`)
      }
    },
  })

  function followable(from: URL, location: string): URL {
    try {
      return checkUrl(allowlist, location, from)
    } catch (err) {
      throw new Error(
        `${from.href} redirected to ${location}, which was not followed: ${(err as Error).message}`,
      )
    }
  }
}

/** http_get as the catalog builds it: the hosts come from HTTP_ALLOWLIST. */
export const httpGet = defineConfiguredTool({
  name: 'http_get',
  settings: { HTTP_ALLOWLIST },
  build: (s) => createHttpGetTool({ allowlist: s.HTTP_ALLOWLIST }),
})
