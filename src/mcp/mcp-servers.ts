/**
 * `MCP_SERVERS`: the MCP servers whose tools runs may use, as a JSON array of
 * `{ name, url, token_secret?, tools?, timeout_ms?, overrides? }`. Checked when the configuration
 * loads; a bad entry is a 503 naming MCP_SERVERS, the entry and what is wrong with it.
 */
import * as z from 'zod/mini'
import { safeParse } from 'zod/v4/core'
import { ConfigError } from '../errors/config-error'
import { parsedBy, readSetting, type EnvRecord } from '../settings/setting'

/** A server's tools are offered as `<server>__<tool>`. */
export const MCP_NAME_SEPARATOR = '__'
export const DEFAULT_MCP_TIMEOUT_MS = 30_000

/** Per tool, what the operator says over the server's hints; only ever stricter. */
export interface McpToolOverride {
  /** `true`: every call needs the confirm policy, whatever the hints say. */
  sideEffect?: true
  /** `false`: never retried after a crash, whatever the hints say. */
  idempotent?: false
}

export interface McpServerConfig {
  name: string
  url: string
  /** The name of the secret whose value is sent as `Authorization: Bearer …`. */
  tokenSecret?: string
  /** Offer only these of the server's tools (its own names, without the prefix). */
  tools?: string[]
  timeoutMs: number
  overrides: Record<string, McpToolOverride>
  /** The secret's value; not enumerable, so logging the config never shows it. */
  readonly token?: string
}

const OVERRIDE_ONLY_STRICTER =
  'an override can only make a tool stricter: {"sideEffect": true} and/or {"idempotent": false}'

const entrySchema = z.strictObject({
  name: z
    .string()
    .check(
      z.regex(
        /^[a-z][a-z0-9_-]{0,31}$/,
        'name must be 1–32 of a-z, 0-9, _ and -, starting with a letter',
      ),
    ),
  url: z.string().check(
    z.refine((u) => /^https?:$/.test(safeUrl(u)?.protocol ?? ''), {
      error: 'url must be the http(s) URL of a Streamable HTTP MCP endpoint',
    }),
  ),
  token_secret: z.optional(
    z
      .string()
      .check(
        z.regex(/^[A-Z_][A-Z0-9_]*$/, 'token_secret must name a secret, e.g. "GITHUB_MCP_TOKEN"'),
      ),
  ),
  tools: z.optional(
    z.array(z.string().check(z.minLength(1)), 'tools must be an array of tool names'),
  ),
  timeout_ms: z.optional(
    z
      .int('timeout_ms must be a whole number of ms')
      .check(
        z.minimum(100, 'timeout_ms must be at least 100'),
        z.maximum(300_000, 'timeout_ms must be at most 300000'),
      ),
  ),
  overrides: z.optional(
    z.record(
      z.string(),
      z.strictObject(
        {
          sideEffect: z.optional(z.literal(true, OVERRIDE_ONLY_STRICTER)),
          idempotent: z.optional(z.literal(false, OVERRIDE_ONLY_STRICTER)),
        },
        OVERRIDE_ONLY_STRICTER,
      ),
    ),
  ),
})

function safeUrl(raw: string): URL | undefined {
  try {
    return new URL(raw)
  } catch {
    return undefined
  }
}

/** The `MCP_SERVERS` setting: the entries, checked one by one. */
export const MCP_SERVERS = parsedBy((raw) => {
  if (raw === undefined) return []
  let value: unknown
  try {
    value = JSON.parse(raw)
  } catch (err) {
    throw new Error(`must be a JSON array of servers (${(err as Error).message})`)
  }
  if (!Array.isArray(value)) {
    throw new Error('must be a JSON array of servers, e.g. [{"name":"docs","url":"https://…/mcp"}]')
  }
  const seen = new Set<string>()
  return value.map((entry, i) => {
    const label = `entry ${i}${isNamed(entry) ? ` ("${entry.name}")` : ''}`
    const parsed = safeParse(entrySchema, entry)
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!
      throw new Error(`${label}: ${describeIssue(issue)}`)
    }
    const e = parsed.data
    if (seen.has(e.name)) throw new Error(`${label}: the name "${e.name}" is used twice`)
    seen.add(e.name)
    return e
  })
})

/** Reads MCP_SERVERS and the secrets it names; throws a ConfigError naming what to fix. */
export function readMcpServers(env: EnvRecord): McpServerConfig[] {
  return readSetting(env, 'MCP_SERVERS', MCP_SERVERS).map((e) => {
    const server: McpServerConfig = {
      name: e.name,
      url: e.url,
      ...(e.token_secret ? { tokenSecret: e.token_secret } : {}),
      ...(e.tools ? { tools: e.tools } : {}),
      timeoutMs: e.timeout_ms ?? DEFAULT_MCP_TIMEOUT_MS,
      overrides: (e.overrides ?? {}) as Record<string, McpToolOverride>,
    }
    if (e.token_secret) {
      const token = env[e.token_secret]
      if (typeof token !== 'string' || token.trim() === '') {
        throw new ConfigError(
          e.token_secret,
          `MCP_SERVERS server "${e.name}" names token_secret ${e.token_secret}, which is not set; ` +
            `set it with \`wrangler secret put ${e.token_secret}\` (or in .dev.vars)`,
        )
      }
      Object.defineProperty(server, 'token', { value: token.trim(), enumerable: false })
    }
    return server
  })
}

function isNamed(entry: unknown): entry is { name: string } {
  return typeof (entry as { name?: unknown } | null)?.name === 'string'
}

function describeIssue(issue: {
  code: string
  message: string
  path: PropertyKey[]
  keys?: string[]
}): string {
  if (issue.code === 'unrecognized_keys') {
    const keys = `unknown key${issue.keys!.length > 1 ? 's' : ''} ${issue.keys!.join(', ')}`
    if (issue.path.length) return `${issue.path.join('.')}: ${keys}; ${OVERRIDE_ONLY_STRICTER}`
    return `${keys}; allowed: name, url, token_secret, tools, timeout_ms, overrides`
  }
  if (issue.path[0] === 'overrides' && issue.path.length >= 2) {
    return `overrides.${String(issue.path[1])}: ${issue.message}`
  }
  if (issue.code === 'invalid_type' && issue.path.length === 0) {
    return 'must be an object like {"name":"docs","url":"https://…/mcp"}'
  }
  if (
    issue.code === 'invalid_type' &&
    issue.path.length === 1 &&
    issue.message.startsWith('Invalid')
  ) {
    return `${String(issue.path[0])} is required or has the wrong type`
  }
  return issue.message
}
