/**
 * Where the OAuth client keeps what must outlive a request: each server's registered client and
 * each connection's tokens. The MCP layer only names the shape; the runs layer stores it
 * (runs/connections/connection-store.ts: D1, every value sealed with AES-GCM).
 */
import type {
  OAuthClientInformationMixed,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js'

/** A connection: the tokens a person (or the deployment) granted, and who and when. */
export interface StoredConnection {
  /** As the SDK gave them to `saveTokens`: `issuer` included, so they go to no other server. */
  tokens: OAuthTokens
  /** Who granted it: `token:<name>`, `slack:<user id>`, or `client_credentials`. */
  grantor: string
  /** The scopes granted (the token response's, else those asked for), or null. */
  scopes: string | null
  grantedAt: number
  /** When the access token expires (ms since epoch), if the server said. */
  expiresAt: number | null
}

/** A client registered with an authorization server, as the SDK gives it to be kept. */
export type OAuthClient = OAuthClientInformationMixed

export interface OAuthRecords {
  connection(server: string, owner: string): Promise<StoredConnection | null>
  saveConnection(server: string, owner: string, connection: StoredConnection): Promise<void>
  deleteConnection(server: string, owner: string): Promise<boolean>
  /** The client registered with the server's authorization server (DCR, or a CIMD URL). */
  client(server: string): Promise<OAuthClientInformationMixed | null>
  saveClient(server: string, client: OAuthClientInformationMixed): Promise<void>
  deleteClient(server: string): Promise<void>
}
