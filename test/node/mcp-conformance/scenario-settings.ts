/**
 * How the Worker is configured for one conformance scenario, as an operator would configure it
 * for that server (docs/mcp.md): the scenario's server as the one MCP_SERVERS entry, the
 * scripted model, and for an `auth/*` scenario OAuth — `auth: "oauth"` with PUBLIC_URL (the
 * Worker's own local URL, where the authorization server sends the browser back) and
 * MCP_TOKEN_KEY, or the scenario's pre-registered client or client credentials (the suite hands
 * them over in MCP_CONFORMANCE_CONTEXT) as the entry's `client_id` and secret settings, and for
 * `auth/basic-cimd` the client metadata URL the suite expects (MCP_CLIENT_METADATA_URL).
 */

/** The API token the person uses, and the name the scenario's server has in MCP_SERVERS. */
export const TOKEN = 'conformance-token'
export const SERVER = 'conf'

/** What the suite tells the client about a scenario (MCP_CONFORMANCE_CONTEXT). */
export interface ScenarioContext {
  client_id?: string
  client_secret?: string
  private_key_pem?: string
  signing_algorithm?: string
}

/** One scenario: its name, its server's URL and the suite's context for it. */
export interface Scenario {
  name: string
  serverUrl: string
  context: ScenarioContext
}

/**
 * Where the suite's example client publishes its client ID metadata document: the client id
 * `auth/basic-cimd` expects when its authorization server says it supports such documents. Its
 * authorization server never fetches it; edgeloop is told it as a deployment whose document is
 * published on another host is (MCP_CLIENT_METADATA_URL), and the SDK's order decides whether
 * it is used.
 */
export const SUITE_CLIENT_METADATA_URL = 'https://conformance-test.local/client-metadata.json'

/** The Worker's bindings for `scenario`, with the Worker at `publicUrl`. */
export function scenarioBindings(scenario: Scenario, publicUrl: string): Record<string, string> {
  const { entry, secrets } = serverEntry(scenario)
  const cimd = scenario.name === 'auth/basic-cimd'
  return {
    API_TOKEN: TOKEN,
    MODEL: 'script',
    CONFIRM_POLICY: 'ask',
    MCP_SERVERS: JSON.stringify([entry]),
    PUBLIC_URL: publicUrl,
    MCP_TOKEN_KEY: Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64'),
    LOG_LEVEL: process.env.EDGELOOP_LOG_LEVEL ?? 'warn',
    ...(cimd ? { MCP_CLIENT_METADATA_URL: SUITE_CLIENT_METADATA_URL } : {}),
    ...secrets,
  }
}

/** Whether a person grants the scenario's server a connection (`auth: "oauth"`). */
export function usesPersonGrant(scenario: Scenario): boolean {
  return serverEntry(scenario).entry.auth === 'oauth'
}

/**
 * The scenario's server as an MCP_SERVERS entry, and the secret settings it names: client
 * credentials for the suite's client-credentials scenarios, a pre-registered client when the
 * suite gives one, else `auth: "oauth"` alone (the client metadata document or dynamic
 * registration, as the authorization server offers).
 */
function serverEntry({ name, serverUrl, context }: Scenario): {
  entry: Record<string, unknown>
  secrets: Record<string, string>
} {
  const entry: Record<string, unknown> = { name: SERVER, url: serverUrl, timeout_ms: 10_000 }
  const secrets: Record<string, string> = {}
  if (!name.startsWith('auth/')) return { entry, secrets }
  entry.auth = name.startsWith('auth/client-credentials-') ? 'client_credentials' : 'oauth'
  if (context.client_id) entry.client_id = context.client_id
  if (context.client_secret) {
    entry.client_secret_secret = 'CONF_CLIENT_SECRET'
    secrets.CONF_CLIENT_SECRET = context.client_secret
  }
  if (context.private_key_pem) {
    entry.private_key_secret = 'CONF_PRIVATE_KEY'
    secrets.CONF_PRIVATE_KEY = context.private_key_pem
    if (context.signing_algorithm) entry.private_key_alg = context.signing_algorithm
  }
  return { entry, secrets }
}
