/**
 * What an MCP server says when it is asked without a token (MCP authorization, "Protected
 * Resource Metadata Discovery"): its `401` challenge names where its protected-resource metadata
 * lives (`resource_metadata`, which may be no well-known path at all) and the scope it wants.
 * A person's grant begins with this, as a client's first request would; a server that answers
 * the probe without asking for a token names neither, and discovery goes by the well-knowns.
 */
import { extractWWWAuthenticateParams } from '@modelcontextprotocol/sdk/client/auth.js'
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js'

export interface McpChallenge {
  resourceMetadataUrl?: URL
  scope?: string
}

type Fetch = (input: string | URL, init?: RequestInit) => Promise<Response>

/**
 * Sends the server an `initialize` without a token and reads its challenge. A session the
 * server opened anyway (it asks for a token only later) is ended again with a DELETE.
 */
export async function probeMcpChallenge(url: string, fetchFn: Fetch): Promise<McpChallenge> {
  const res = await fetchFn(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: {
        protocolVersion: LATEST_PROTOCOL_VERSION,
        capabilities: {},
        clientInfo: { name: 'edgeloop', version: '0.1.0' },
      },
    }),
  })
  if (res.status === 401 || res.status === 403) {
    const { resourceMetadataUrl, scope } = extractWWWAuthenticateParams(res)
    return { ...(resourceMetadataUrl ? { resourceMetadataUrl } : {}), ...(scope ? { scope } : {}) }
  }
  const session = res.headers.get('mcp-session-id')
  if (res.ok && session) {
    await fetchFn(url, { method: 'DELETE', headers: { 'mcp-session-id': session } }).catch(
      () => undefined,
    )
  }
  return {}
}
