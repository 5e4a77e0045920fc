/**
 * An MCP server needs an OAuth connection edgeloop does not hold (none was granted, its refresh
 * failed, or the server asks for more scopes than were granted): what a run waits on as a
 * `connect` item (docs/mcp.md#oauth), never "could not be reached".
 */
export type ConnectionNeededReason = 'no_grant' | 'refresh_failed' | 'insufficient_scope'

export class McpConnectionNeeded extends Error {
  override name = 'McpConnectionNeeded'
  constructor(
    readonly server: string,
    /** Whose connection: `deployment`, `token:<name>` or `slack:<user id>`. */
    readonly owner: string,
    /** The scopes the authorization would ask for (space-separated), or null. */
    readonly scopes: string | null,
    readonly reason: ConnectionNeededReason,
  ) {
    super(
      `the ${server} MCP server needs a connection` +
        (reason === 'refresh_failed' ? ' (the granted one could not be refreshed)' : '') +
        (reason === 'insufficient_scope' && scopes ? ` (forbidden: needs scope ${scopes})` : '') +
        `: ${owner === 'deployment' ? 'the deployment' : owner} has not granted one; ` +
        'connect it in the console, in Slack, or with POST /v1/connections/' +
        server,
    )
  }
}

/** An authorization server or MCP server that broke the OAuth rules: nothing was stored. */
export class McpOAuthError extends Error {
  override name = 'McpOAuthError'
  constructor(server: string, problem: string, options?: { cause?: unknown }) {
    super(`OAuth with the ${server} MCP server failed: ${problem}`, options)
  }
}

/**
 * A server refused what edgeloop sent (HTTP 401 or 403) and no person can fix it from a run: a
 * fixed token that is wrong, or a scope a client-credentials client was not given.
 */
export class McpAccessRefused extends Error {
  override name = 'McpAccessRefused'
  constructor(
    readonly server: string,
    readonly status: number,
    /** The scope the server's challenge asks for, or null. */
    readonly scope: string | null,
  ) {
    super(
      status === 403
        ? `the ${server} MCP server answered HTTP 403: forbidden${scope ? `: needs scope ${scope}` : ''}`
        : `the ${server} MCP server answered HTTP 401: needs a connection (its credentials were refused; check its token_secret or auth settings)`,
    )
  }
}
