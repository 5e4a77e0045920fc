/**
 * MCP connections, durably (docs/mcp.md#where-tokens-live): the OAuth tokens a person or the
 * deployment granted, each server's registered client, and the authorizations under way (a
 * single-use connect link, then the `state` the callback must bring back). In D1, beside the run
 * index (the `RUN_INDEX` binding, tables `mcp_*`), because the Worker's callback route and every
 * run's object read them. Every secret value (tokens, a client's secret, a PKCE verifier) is
 * sealed with AES-GCM (security/sealed-box.ts) under MCP_TOKEN_KEY, bound to its row's key; what
 * is stored in the clear is only what the console lists: server, owner, grantor, scopes, times.
 */
import type { OAuthClient, OAuthRecords, StoredConnection } from '../../mcp/index'
import { learnSecrets } from '../../security/redact'
import type { SealedBox } from '../../security/sealed-box'
import { sha256Hex } from '../../security/sha256'

const SCHEMA = [
  `CREATE TABLE IF NOT EXISTS mcp_connections (
     server TEXT NOT NULL, owner TEXT NOT NULL, grantor TEXT NOT NULL, scopes TEXT,
     granted_at INTEGER NOT NULL, expires_at INTEGER, sealed TEXT NOT NULL,
     PRIMARY KEY (server, owner))`,
  `CREATE TABLE IF NOT EXISTS mcp_oauth_clients (server TEXT PRIMARY KEY, sealed TEXT NOT NULL)`,
  // A connect link (kind 'link', by its id's hash) or an authorization's state (kind 'state',
  // by the state's hash): single use (used_at), expiring; the hash, so reading the table does
  // not give anyone a link to follow.
  `CREATE TABLE IF NOT EXISTS mcp_authorizations (
     id TEXT PRIMARY KEY, kind TEXT NOT NULL, server TEXT NOT NULL, owner TEXT NOT NULL,
     created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL, used_at INTEGER,
     sealed TEXT NOT NULL)`,
]

const ready = new WeakMap<D1Database, Promise<void>>()

function ensureSchema(db: D1Database): Promise<void> {
  let p = ready.get(db)
  if (!p) {
    p = db.batch(SCHEMA.map((s) => db.prepare(s))).then(() => undefined)
    p.catch(() => ready.delete(db))
    ready.set(db, p)
  }
  return p
}

/** A connection as the API and the console list it: never its tokens. */
export interface ConnectionListing {
  server: string
  owner: string
  grantor: string
  scopes: string | null
  grantedAt: number
  expiresAt: number | null
}

/** What an authorization under way carries, sealed (links and states alike). */
export interface PendingAuthorization {
  server: string
  owner: string
  /** Who may grant, and as whom the grant is recorded: `token:<name>`, `slack:<user>`. */
  person: string
  /** The run and item waiting for it, when a run asked. */
  runId: string | null
  itemId: string | null
  scopes: string | null
  /** A state's: the PKCE verifier, the issuer found, whether it sends `iss` back, the browser. */
  codeVerifier?: string
  issuer?: string
  /** The issuer its metadata names, when it differs from where it was found (2025-03-26). */
  metadataIssuer?: string
  /** Where the server's challenge said its protected-resource metadata lives. */
  resourceMetadataUrl?: string
  issInResponse?: boolean
  browserHash?: string
}

export class ConnectionStore implements OAuthRecords {
  constructor(
    private readonly db: D1Database,
    private readonly box: SealedBox,
    private readonly now: () => number = Date.now,
  ) {}

  async connection(server: string, owner: string): Promise<StoredConnection | null> {
    await ensureSchema(this.db)
    const row = await this.db
      .prepare('SELECT sealed FROM mcp_connections WHERE server = ? AND owner = ?')
      .bind(server, owner)
      .first<{ sealed: string }>()
    if (!row) return null
    const plain = await this.box.open(row.sealed, connectionKey(server, owner))
    if (plain === null) return null
    const connection = JSON.parse(plain) as StoredConnection
    learnSecrets([connection.tokens.access_token, connection.tokens.refresh_token])
    // Sealed with the previous key: sealed again with the current one (rotation, docs/mcp.md).
    if (!this.box.isCurrent(row.sealed)) await this.saveConnection(server, owner, connection)
    return connection
  }

  async saveConnection(server: string, owner: string, c: StoredConnection): Promise<void> {
    await ensureSchema(this.db)
    learnSecrets([c.tokens.access_token, c.tokens.refresh_token])
    const sealed = await this.box.seal(JSON.stringify(c), connectionKey(server, owner))
    await this.db
      .prepare(
        `INSERT INTO mcp_connections (server, owner, grantor, scopes, granted_at, expires_at, sealed)
         VALUES (?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (server, owner) DO UPDATE SET grantor = excluded.grantor,
           scopes = excluded.scopes, granted_at = excluded.granted_at,
           expires_at = excluded.expires_at, sealed = excluded.sealed`,
      )
      .bind(server, owner, c.grantor, c.scopes, c.grantedAt, c.expiresAt, sealed)
      .run()
  }

  async deleteConnection(server: string, owner: string): Promise<boolean> {
    await ensureSchema(this.db)
    const res = await this.db
      .prepare('DELETE FROM mcp_connections WHERE server = ? AND owner = ?')
      .bind(server, owner)
      .run()
    return (res.meta.changes ?? 0) > 0
  }

  /** Every connection (optionally one owner's), for the API and the console. */
  async list(owner?: string): Promise<ConnectionListing[]> {
    await ensureSchema(this.db)
    const sql =
      'SELECT server, owner, grantor, scopes, granted_at, expires_at FROM mcp_connections' +
      (owner === undefined ? '' : ' WHERE owner = ?') +
      ' ORDER BY server, owner'
    const stmt = this.db.prepare(sql)
    const { results } = await (owner === undefined ? stmt : stmt.bind(owner)).all<{
      server: string
      owner: string
      grantor: string
      scopes: string | null
      granted_at: number
      expires_at: number | null
    }>()
    return results.map((r) => ({
      server: r.server,
      owner: r.owner,
      grantor: r.grantor,
      scopes: r.scopes,
      grantedAt: r.granted_at,
      expiresAt: r.expires_at,
    }))
  }

  async client(server: string): Promise<OAuthClient | null> {
    await ensureSchema(this.db)
    const row = await this.db
      .prepare('SELECT sealed FROM mcp_oauth_clients WHERE server = ?')
      .bind(server)
      .first<{ sealed: string }>()
    if (!row) return null
    const plain = await this.box.open(row.sealed, clientKey(server))
    return plain === null ? null : (JSON.parse(plain) as OAuthClient)
  }

  async saveClient(server: string, client: OAuthClient): Promise<void> {
    await ensureSchema(this.db)
    const sealed = await this.box.seal(JSON.stringify(client), clientKey(server))
    await this.db
      .prepare(
        `INSERT INTO mcp_oauth_clients (server, sealed) VALUES (?, ?)
         ON CONFLICT (server) DO UPDATE SET sealed = excluded.sealed`,
      )
      .bind(server, sealed)
      .run()
  }

  async deleteClient(server: string): Promise<void> {
    await ensureSchema(this.db)
    await this.db.prepare('DELETE FROM mcp_oauth_clients WHERE server = ?').bind(server).run()
  }

  /** Records an authorization under way: a link or a state, by the hash of its secret. */
  async putAuthorization(
    kind: 'link' | 'state',
    secret: string,
    pending: PendingAuthorization,
    ttlMs: number,
  ): Promise<void> {
    await ensureSchema(this.db)
    const id = await authorizationId(kind, secret)
    const now = this.now()
    const sealed = await this.box.seal(JSON.stringify(pending), id)
    await this.db
      .prepare(
        `INSERT INTO mcp_authorizations (id, kind, server, owner, created_at, expires_at, sealed)
         VALUES (?, ?, ?, ?, ?, ?, ?)`,
      )
      .bind(id, kind, pending.server, pending.owner, now, now + ttlMs, sealed)
      .run()
  }

  /**
   * Takes an authorization once: marks it used and returns it, or says why not (none such, used
   * before, expired). A second take of the same secret, even at the same moment, finds it used.
   */
  async takeAuthorization(
    kind: 'link' | 'state',
    secret: string,
  ): Promise<{ ok: true; pending: PendingAuthorization } | { ok: false; why: TakeRefusal }> {
    await ensureSchema(this.db)
    const id = await authorizationId(kind, secret)
    const now = this.now()
    const taken = await this.db
      .prepare(
        `UPDATE mcp_authorizations SET used_at = ?
         WHERE id = ? AND kind = ? AND used_at IS NULL AND expires_at > ?
         RETURNING sealed`,
      )
      .bind(now, id, kind, now)
      .first<{ sealed: string }>()
    if (!taken) {
      const row = await this.db
        .prepare('SELECT used_at, expires_at FROM mcp_authorizations WHERE id = ? AND kind = ?')
        .bind(id, kind)
        .first<{ used_at: number | null; expires_at: number }>()
      return { ok: false, why: !row ? 'unknown' : row.used_at !== null ? 'used' : 'expired' }
    }
    const plain = await this.box.open(taken.sealed, id)
    if (plain === null) return { ok: false, why: 'unknown' }
    return { ok: true, pending: JSON.parse(plain) as PendingAuthorization }
  }

  /** Forgets authorizations that ended more than a day ago (links and states are minutes). */
  async sweep(): Promise<void> {
    await ensureSchema(this.db)
    await this.db
      .prepare('DELETE FROM mcp_authorizations WHERE expires_at < ?')
      .bind(this.now() - 86_400_000)
      .run()
  }
}

export type TakeRefusal = 'unknown' | 'used' | 'expired'

const connectionKey = (server: string, owner: string) => `mcp_connections:${server}:${owner}`
const clientKey = (server: string) => `mcp_oauth_clients:${server}`

function authorizationId(kind: string, secret: string): Promise<string> {
  return sha256Hex(`${kind}:${secret}`)
}
