/**
 * `MCP_SERVERS`: the MCP servers whose tools runs may use, as a JSON array of
 * `{ name, url, token_secret? | auth?, tools?, timeout_ms?, overrides? }`. Checked when the
 * configuration loads; a bad entry is a 503 naming MCP_SERVERS, the entry and what is wrong with
 * it. `auth` (docs/mcp.md#oauth) is OAuth: `"oauth"` (a person grants a connection) or
 * `"client_credentials"` (the deployment's own client), with the client's secrets named, never
 * given.
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

/** Who owns a server's OAuth connection: one for the deployment, or one per person. */
export type McpConnectionOwner = 'deployment' | 'person'

/**
 * How edgeloop authenticates to a server with OAuth (docs/mcp.md#oauth). The secrets' values are
 * not enumerable, so logging the config never shows them.
 */
export type McpServerAuth =
  | {
      kind: 'oauth'
      /** Whose grant a run uses: the deployment's one, or the person's behind the run. */
      owner: McpConnectionOwner
      /** A client registered with the authorization server beforehand (else CIMD or DCR). */
      clientId?: string
      /** Asked for when neither the server's challenge nor its metadata names scopes. */
      scopes?: string
      readonly clientSecret?: string
    }
  | {
      kind: 'client_credentials'
      clientId: string
      scopes?: string
      /** RS256/ES256 for a private key; absent with a client secret. */
      keyAlg?: 'RS256' | 'ES256'
      readonly clientSecret?: string
      readonly privateKey?: string
    }

export interface McpServerConfig {
  name: string
  url: string
  /** The name of the secret whose value is sent as `Authorization: Bearer …`. */
  tokenSecret?: string
  /** OAuth instead of a fixed token. */
  auth?: McpServerAuth
  /** Offer only these of the server's tools (its own names, without the prefix). */
  tools?: string[]
  timeoutMs: number
  overrides: Record<string, McpToolOverride>
  /** The secret's value; not enumerable, so logging the config never shows it. */
  readonly token?: string
}

const OVERRIDE_ONLY_STRICTER =
  'an override can only make a tool stricter: {"sideEffect": true} and/or {"idempotent": false}'

const SECRET_NAME = /^[A-Z_][A-Z0-9_]*$/
const secretName = (field: string) =>
  z.optional(
    z
      .string()
      .check(z.regex(SECRET_NAME, `${field} must name a secret, e.g. "LINEAR_CLIENT_SECRET"`)),
  )

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
  auth: z.optional(
    z.enum(['oauth', 'client_credentials'], 'auth must be "oauth" or "client_credentials"'),
  ),
  owner: z.optional(z.enum(['deployment', 'person'], 'owner must be "deployment" or "person"')),
  client_id: z.optional(z.string().check(z.minLength(1), z.maxLength(2_000))),
  client_secret_secret: secretName('client_secret_secret'),
  private_key_secret: secretName('private_key_secret'),
  private_key_alg: z.optional(z.enum(['RS256', 'ES256'], 'private_key_alg must be RS256 or ES256')),
  scopes: z.optional(
    z
      .string()
      .check(
        z.regex(
          /^[\x21\x23-\x5b\x5d-\x7e]+( [\x21\x23-\x5b\x5d-\x7e]+)*$/,
          'scopes must be OAuth scopes separated by single spaces',
        ),
      ),
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
    const authProblem = authEntryProblem(e)
    if (authProblem) throw new Error(`${label}: ${authProblem}`)
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
    if (e.auth) server.auth = readAuth(env, e)
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

type Entry = z.infer<typeof entrySchema>

/** What is wrong with an entry's OAuth fields taken together; undefined when nothing. */
function authEntryProblem(e: Entry): string | undefined {
  const oauthOnly = ['owner', 'client_id', 'client_secret_secret', 'private_key_secret', 'scopes']
  if (!e.auth) {
    const stray = oauthOnly.filter((k) => e[k as keyof Entry] !== undefined)
    if (stray.length) return `${stray.join(', ')} need auth ("oauth" or "client_credentials")`
    return undefined
  }
  if (e.token_secret) return 'token_secret and auth exclude each other: a server takes one'
  if (e.auth === 'oauth') {
    if (e.private_key_secret) return 'private_key_secret is for auth "client_credentials"'
    if (e.client_secret_secret && !e.client_id) return 'client_secret_secret needs client_id'
    return undefined
  }
  if (e.owner === 'person') {
    return 'auth "client_credentials" is the deployment\'s own client: owner must be "deployment"'
  }
  if (!e.client_id) return 'auth "client_credentials" needs client_id'
  if (!!e.client_secret_secret === !!e.private_key_secret) {
    return 'auth "client_credentials" needs one of client_secret_secret and private_key_secret'
  }
  if (e.private_key_alg && !e.private_key_secret) return 'private_key_alg needs private_key_secret'
  return undefined
}

/** The entry's OAuth settings with its secrets read (not enumerable). */
function readAuth(env: EnvRecord, e: Entry): McpServerAuth {
  const secret = (name: string | undefined) => (name ? secretValue(env, e.name, name) : undefined)
  const auth: McpServerAuth =
    e.auth === 'oauth'
      ? {
          kind: 'oauth',
          owner: e.owner ?? 'deployment',
          ...(e.client_id ? { clientId: e.client_id } : {}),
          ...(e.scopes ? { scopes: e.scopes } : {}),
        }
      : {
          kind: 'client_credentials',
          clientId: e.client_id!,
          ...(e.scopes ? { scopes: e.scopes } : {}),
          ...(e.private_key_secret ? { keyAlg: e.private_key_alg ?? 'RS256' } : {}),
        }
  const hidden = { enumerable: false } as const
  const clientSecret = secret(e.client_secret_secret)
  if (clientSecret) Object.defineProperty(auth, 'clientSecret', { ...hidden, value: clientSecret })
  const privateKey = secret(e.private_key_secret)
  if (privateKey) Object.defineProperty(auth, 'privateKey', { ...hidden, value: privateKey })
  return auth
}

function secretValue(env: EnvRecord, server: string, name: string): string {
  const value = env[name]
  if (typeof value !== 'string' || value.trim() === '') {
    throw new ConfigError(
      name,
      `MCP_SERVERS server "${server}" names the secret ${name}, which is not set; ` +
        `set it with \`wrangler secret put ${name}\` (or in .dev.vars)`,
    )
  }
  return value.trim()
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
    return `${keys}; allowed: name, url, token_secret, auth, owner, client_id, client_secret_secret, private_key_secret, private_key_alg, scopes, tools, timeout_ms, overrides`
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
