/**
 * The settings OAuth for MCP servers needs besides MCP_SERVERS (docs/mcp.md#oauth): the key that
 * seals connections at rest (MCP_TOKEN_KEY, and MCP_TOKEN_KEY_PREVIOUS during a rotation), and,
 * for `auth: "oauth"`, the Worker's public origin (PUBLIC_URL), where the authorization server
 * sends a person back and reads edgeloop's client metadata document, unless that document is
 * published at another https URL (MCP_CLIENT_METADATA_URL).
 */
import { ConfigError } from '../errors/config-error'
import type { EnvRecord } from '../settings/setting'
import type { McpServerConfig } from './mcp-servers'
import { CLIENT_METADATA_PATH } from './oauth/mcp-oauth-provider'

/** Throws a ConfigError naming the setting a server with `auth` needs and lacks. */
export function checkMcpOAuthSettings(env: EnvRecord, servers: readonly McpServerConfig[]): void {
  clientMetadataUrlOf(env)
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

/**
 * Where edgeloop's client ID metadata document is published, which is then its client id:
 * MCP_CLIENT_METADATA_URL when set (a deployment behind another host, or one that publishes the
 * document elsewhere), else PUBLIC_URL/oauth/client-metadata.json when PUBLIC_URL is https;
 * undefined otherwise (the client then registers itself). A client id URL must be https with a
 * path (draft-ietf-oauth-client-id-metadata-document §3); any other value is a ConfigError.
 */
export function clientMetadataUrlOf(env: EnvRecord): string | undefined {
  const raw = text(env, 'MCP_CLIENT_METADATA_URL')
  if (raw === undefined) {
    const origin = publicUrlOf(env)
    if (origin === undefined || !origin.startsWith('https:')) return undefined
    return new URL(CLIENT_METADATA_PATH, origin).href
  }
  let url: URL | undefined
  try {
    url = new URL(raw)
  } catch {
    url = undefined
  }
  const problem =
    url === undefined
      ? 'is not a URL'
      : url.protocol !== 'https:'
        ? `is ${url.protocol.slice(0, -1)}, and a client id URL must be https`
        : url.pathname === '/'
          ? 'has no path, and a client id URL must have one'
          : url.hash || url.username || url.password
            ? 'must not carry a fragment or credentials'
            : undefined
  if (problem) {
    throw new ConfigError(
      'MCP_CLIENT_METADATA_URL',
      `MCP_CLIENT_METADATA_URL ${problem}: set it to the https URL where edgeloop's client metadata document is served (e.g. https://edgeloop.example.com/oauth/client-metadata.json), or unset it`,
    )
  }
  return url!.href
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
