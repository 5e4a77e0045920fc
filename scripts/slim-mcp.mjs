// The MCP SDK's Streamable HTTP client transport as the Worker ships it: the SDK's own module with
// its one import of the OAuth client (`./auth.js`: discovery, dynamic registration, PKCE, token
// exchange, with the schemas it needs) replaced by stand-ins. The transport calls into it only
// when it was given an `authProvider`; edgeloop authenticates to its MCP servers with a static
// bearer token (src/mcp/mcp-session.ts) and never gives one. The other imports point at the
// SDK's own files (relative to the output, which lies in the same node_modules), so the transport
// shares the SDK's modules (its types, its errors) as before.
//
// scripts/build.mjs runs this; wrangler.toml's `[alias]` and vitest.config.ts point
// `@modelcontextprotocol/sdk/client/streamableHttp.js` at the output
// (docs/development.md#the-build).
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { dirname, join, relative, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { writeAtomic } from './write-atomic.mjs'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const sdk = join(root, 'node_modules', '@modelcontextprotocol', 'sdk')
const source = join(sdk, 'dist', 'esm', 'client', 'streamableHttp.js')

/** The module wrangler.toml's `[alias]` and vitest.config.ts point the transport at. */
export const SLIM_MCP_TRANSPORT = join(root, 'node_modules', '.cache', 'edgeloop', 'mcp-http.mjs')

/** The import replaced; a new SDK that imports otherwise fails the build here, loudly. */
const AUTH_IMPORT =
  "import { auth, extractWWWAuthenticateParams, UnauthorizedError } from './auth.js';"

// UnauthorizedError as the SDK defines it; the two functions throw a clear error.
const STAND_INS = `const leftOut = (name) =>
  new Error('@modelcontextprotocol/sdk: ' + name + " (OAuth) is left out of edgeloop's bundle" +
    ' (scripts/slim-mcp.mjs); its MCP servers take a static bearer token, not an authProvider')
function auth() {
  throw leftOut('auth')
}
function extractWWWAuthenticateParams() {
  throw leftOut('extractWWWAuthenticateParams')
}
class UnauthorizedError extends Error {
  constructor(message) {
    super(message ?? 'Unauthorized')
  }
}`

/** The transport's source with the stand-ins in place of the OAuth client. */
export function slimTransport(code) {
  if (!code.includes(AUTH_IMPORT)) {
    throw new Error(
      `scripts/slim-mcp.mjs: ${source} no longer imports the OAuth client as expected`,
    )
  }
  return code
    .replace(AUTH_IMPORT, STAND_INS)
    .replace(/ from '(\.\.?\/[^']+)';/g, (_, path) => {
      const target = relative(dirname(SLIM_MCP_TRANSPORT), join(dirname(source), path))
      return ` from ${JSON.stringify(target.split(sep).join('/'))};`
    })
    .replace(/\n\/\/# sourceMappingURL=.*\n?$/, '\n')
}

/** Writes SLIM_MCP_TRANSPORT unless it is current; returns its path. */
export function buildSlimMcpTransport() {
  const code = readFileSync(source, 'utf8')
  const self = readFileSync(fileURLToPath(import.meta.url))
  const digest = createHash('sha256').update(code).update(self).digest('hex')
  const stamp = `// edgeloop slim MCP transport ${digest.slice(0, 16)}\n`
  let current = ''
  try {
    current = readFileSync(SLIM_MCP_TRANSPORT, 'utf8').slice(0, stamp.length)
  } catch {}
  if (current === stamp) return SLIM_MCP_TRANSPORT
  writeAtomic(SLIM_MCP_TRANSPORT, stamp + slimTransport(code))
  return SLIM_MCP_TRANSPORT
}
