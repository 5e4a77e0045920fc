/**
 * Which URLs the HTTP tools (and callbacks) may reach. Entries are exact hosts (`docs.example.com`,
 * `localhost:8787`: compared with the URL's host, port included) or `*.example.com`, which
 * matches any subdomain of example.com on the default port but not example.com itself. An entry
 * allows https only, unless it is written with `http://` (`http://localhost:8787`): plain http is
 * something an operator says out loud, per host.
 */
import { parsedBy, splitList } from '../src/settings/setting'

export interface HostAllowlist {
  /** The entries as configured, for error messages. */
  readonly entries: readonly string[]
  allows(url: URL): boolean
}

const HOST_ENTRY = /^(\*\.)?([a-z0-9-]+(?:\.[a-z0-9-]+)*|\[[0-9a-f:.]+\])(:\d{1,5})?$/
const SCHEME = /^(https?):\/\//

/** Checks the entries once, when a tool is built, and says which one is wrong and why. */
export function compileAllowlist(toolName: string, entries: readonly string[]): HostAllowlist {
  if (!Array.isArray(entries) || entries.length === 0) {
    throw new TypeError(
      `${toolName}: the allowlist is empty; list the hosts it may reach, e.g. ["docs.example.com", "*.example.org"]`,
    )
  }
  // host → whether plain http is allowed too
  const exact = new Map<string, boolean>()
  const suffixes: { suffix: string; http: boolean }[] = []
  for (const raw of entries) {
    const written = typeof raw === 'string' ? raw.trim().toLowerCase() : ''
    const scheme = SCHEME.exec(written)?.[1]
    const entry = scheme ? written.slice(scheme.length + 3).replace(/\/$/, '') : written
    const http = scheme === 'http'
    const m = HOST_ENTRY.exec(entry)
    if (!m || (m[1] && (m[3] || m[2]!.startsWith('[') || !m[2]!.includes('.')))) {
      throw new TypeError(
        `${toolName}: allowlist entry ${JSON.stringify(raw)} is not a host; write "host", ` +
          '"host:port", "*.domain.tld" or "http://host" to allow plain http (no path or wildcard port)',
      )
    }
    if (m[1]) suffixes.push({ suffix: `.${m[2]}`, http })
    else exact.set(entry, http || (exact.get(entry) ?? false))
  }
  const schemeOk = (url: URL, http: boolean) => url.protocol === 'https:' || http
  return {
    entries: [...entries],
    allows: (url) => {
      const exactHttp = exact.get(url.host)
      if (exactHttp !== undefined && schemeOk(url, exactHttp)) return true
      return (
        url.port === '' &&
        suffixes.some((s) => url.hostname.endsWith(s.suffix) && schemeOk(url, s.http))
      )
    },
  }
}

/**
 * Parses `raw` (relative to `base` for redirects) and refuses anything the tools must not
 * fetch: other schemes, credentials in the URL, hosts outside the allowlist. Messages leave the
 * tool name out: dispatch prefixes it (`[ToolError] http_get failed: …`).
 */
export function checkUrl(allowlist: HostAllowlist, raw: string, base?: URL): URL {
  let url: URL
  try {
    url = new URL(raw, base)
  } catch {
    throw new Error(`${JSON.stringify(raw)} is not a valid URL; write an absolute https:// URL`)
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new Error(`scheme "${url.protocol}" is not allowed; only http:// and https:// URLs`)
  }
  if (url.username || url.password) {
    throw new Error(
      `credentials in the URL are not allowed (${url.host}); remove the "user:password@" part`,
    )
  }
  if (!allowlist.allows(url)) {
    if (
      url.protocol === 'http:' &&
      allowlist.allows(new URL(url.href.replace(/^http:/, 'https:')))
    ) {
      throw new Error(
        `plain http to ${url.host} is not allowed; use https://, or list the host as "http://${url.host}" in the allowlist`,
      )
    }
    throw new Error(
      `host ${url.host} is not in the allowlist (${allowlist.entries.join(', ')}); ` +
        'use one of those hosts or ask the user to allow this one',
    )
  }
  return url
}

/** What `checkUrl` would refuse about `raw`, as a sentence; undefined when it may be fetched. */
export function allowlistProblem(allowlist: HostAllowlist, raw: string): string | undefined {
  try {
    checkUrl(allowlist, raw)
    return undefined
  } catch (err) {
    return `${(err as Error).message}.`
  }
}

/** `HTTP_ALLOWLIST`, the hosts http_get and http_post may reach; each entry checked when read. */
export const HTTP_ALLOWLIST = parsedBy((raw) => {
  const entries = splitList(raw)
  if (entries.length === 0) {
    throw new Error(
      'is required: list the hosts the HTTP tools may reach, e.g. "docs.example.com,*.example.org"',
    )
  }
  compileAllowlist('HTTP_ALLOWLIST', entries)
  return entries
})
