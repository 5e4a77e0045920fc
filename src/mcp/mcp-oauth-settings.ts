/**
 * The settings OAuth for MCP servers needs besides MCP_SERVERS (docs/mcp.md#oauth): the key that
 * seals connections at rest (MCP_TOKEN_KEY, and MCP_TOKEN_KEY_PREVIOUS during a rotation), and,
 * for `auth: "oauth"`, the Worker's public origin (PUBLIC_URL), where the authorization server
 * sends a person back and reads edgeloop's client metadata document.
 */
import { ConfigError } from '../errors/config-error'
import type { EnvRecord } from '../settings/setting'
import type { McpServerConfig } from './mcp-servers'

/** Throws a ConfigError naming the setting a server with `auth` needs and lacks. */
export function checkMcpOAuthSettings(env: EnvRecord, servers: readonly McpServerConfig[]): void {
  const withAuth = servers.filter((s) => s.auth)
  if (!withAuth.length) return
  const names = withAuth.map((s) => s.name).join(', ')
  for (const name of ['MCP_TOKEN_KEY', 'MCP_TOKEN_KEY_PREVIOUS'] as const) {
    const value = text(env, name)
    if (value === undefined) {
      if (name === 'MCP_TOKEN_KEY') {
        throw new ConfigError(
          name,
          `MCP_TOKEN_KEY is not set, and MCP_SERVERS ${names} use OAuth: its tokens are stored sealed with it; make one with \`openssl rand -base64 32\` and \`wrangler secret put MCP_TOKEN_KEY\``,
        )
      }
      continue
    }
    if (!isKey(value)) {
      throw new ConfigError(
        name,
        `${name} must be 32 random bytes in base64 (\`openssl rand -base64 32\`)`,
      )
    }
  }
  if (!withAuth.some((s) => s.auth?.kind === 'oauth')) return
  const url = publicUrlOf(env)
  if (url === undefined) {
    throw new ConfigError(
      'PUBLIC_URL',
      `PUBLIC_URL is not set, and MCP_SERVERS ${names} use auth "oauth": it is where the authorization server sends a person back (PUBLIC_URL/oauth/callback); set it to the Worker's https origin`,
    )
  }
}

/** The Worker's public origin from PUBLIC_URL (https, or http on localhost), or undefined. */
export function publicUrlOf(env: EnvRecord): string | undefined {
  const raw = text(env, 'PUBLIC_URL')
  if (raw === undefined) return undefined
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new ConfigError(
      'PUBLIC_URL',
      `PUBLIC_URL must be a URL like https://edgeloop.example.com`,
    )
  }
  const local = url.hostname === 'localhost' || url.hostname === '127.0.0.1'
  if (url.protocol !== 'https:' && !(local && url.protocol === 'http:')) {
    throw new ConfigError('PUBLIC_URL', 'PUBLIC_URL must be https (http only on localhost)')
  }
  return url.origin
}

function text(env: EnvRecord, name: string): string | undefined {
  const v = env[name]
  return typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined
}

function isKey(value: string): boolean {
  try {
    return atob(value).length === 32
  } catch {
    return false
  }
}
