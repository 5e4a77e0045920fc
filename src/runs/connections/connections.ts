/**
 * MCP connections as the service uses them (docs/mcp.md#oauth): the store for an environment,
 * the person behind a run, and a person's grant from link to callback:
 *
 * 1. `createConnectLink`: a single-use link on the Worker (15 minutes), bound to the server, the
 *    connection's owner, the person who may follow it, and the run and item waiting, if any.
 * 2. `followConnectLink`: the link is taken (once), discovery and PKCE run, and a `state` (10
 *    minutes, single use) is stored with the verifier, the issuer and a hash of a nonce the
 *    person's browser gets as a cookie; the person is sent to the authorization server.
 * 3. `completeConnect`: the callback's `state` is taken (once), must come back in the same
 *    browser, with the issuer it began with (RFC 9207 `iss` when the server sends it); only then
 *    is the code exchanged and the tokens stored as the person's (or the deployment's)
 *    connection. Any mismatch stores nothing.
 */
import {
  beginMcpAuthorization,
  clientMetadataUrlOf,
  connectionOwner,
  finishMcpAuthorization,
  publicUrlOf,
  revokeMcpTokens,
  type McpServerAuth,
  type McpServerConfig,
  type McpSessionAuth,
} from '../../mcp/index'
import { SealedBox } from '../../security/sealed-box'
import { sha256Hex } from '../../security/sha256'
import { toHex } from '../../security/hex'
import type { EnvRecord } from '../../config'
import { runStub } from '../types'
import { ConnectionStore, type PendingAuthorization, type TakeRefusal } from './connection-store'

export {
  clientMetadataDocument,
  clientMetadataUrlOf,
  connectionOwner,
  publicUrlOf,
} from '../../mcp/index'

export const CONNECT_LINK_PATH = '/oauth/connect'
const LINK_TTL_MS = 15 * 60_000
const STATE_TTL_MS = 10 * 60_000

/** What of the Worker's env connections read. */
export interface ConnectionsEnv {
  RUN_INDEX?: D1Database
  MCP_TOKEN_KEY?: string
  MCP_TOKEN_KEY_PREVIOUS?: string
  PUBLIC_URL?: string
  MCP_CLIENT_METADATA_URL?: string
}

const boxes = new Map<string, Promise<SealedBox>>()

/** The connection store of `env`; null when MCP_TOKEN_KEY or the D1 binding is missing. */
export async function connectionStoreOf(env: ConnectionsEnv): Promise<ConnectionStore | null> {
  const key = typeof env.MCP_TOKEN_KEY === 'string' ? env.MCP_TOKEN_KEY.trim() : ''
  if (!key || !env.RUN_INDEX) return null
  const previous =
    typeof env.MCP_TOKEN_KEY_PREVIOUS === 'string' ? env.MCP_TOKEN_KEY_PREVIOUS.trim() : ''
  const id = `${key}\n${previous}`
  let box = boxes.get(id)
  if (!box) {
    box = SealedBox.fromKeys(key, previous || undefined)
    box.catch(() => boxes.delete(id))
    boxes.set(id, box)
  }
  return new ConnectionStore(env.RUN_INDEX, await box)
}

/**
 * The person behind a run, as a connection owner: the API token's name (`token:<name>`), or the
 * Slack user who started it (`slack:<user id>`); null for a webhook or the system.
 */
export function personOf(info: { owner?: string | null; requestedBy: string }): string | null {
  if (info.requestedBy.startsWith('slack:')) return info.requestedBy
  if (info.owner) return `token:${info.owner}`
  if (info.requestedBy === 'api') return 'token:api'
  return null
}

/** What a run's MCP sessions need for servers with `auth`; undefined when none has it. */
export async function sessionAuthOf(
  env: ConnectionsEnv,
  servers: readonly McpServerConfig[],
  person: string | null,
): Promise<McpSessionAuth | undefined> {
  if (!servers.some((s) => s.auth)) return undefined
  const records = await connectionStoreOf(env)
  if (!records) return undefined
  return { records, person, ...urlsOf(env) }
}

/** Where the authorization server finds edgeloop: PUBLIC_URL, and its client metadata URL. */
function urlsOf(env: ConnectionsEnv): { publicUrl?: string; clientMetadataUrl?: string } {
  const publicUrl = publicUrlOf(env as EnvRecord)
  const clientMetadataUrl = clientMetadataUrlOf(env as EnvRecord)
  return {
    ...(publicUrl ? { publicUrl } : {}),
    ...(clientMetadataUrl ? { clientMetadataUrl } : {}),
  }
}

/**
 * The per-person servers among those a run may use, when no person is behind it: such a run
 * could only wait for a grant nobody may give, so it is refused at start.
 */
export function personServersWithoutPerson(
  servers: readonly McpServerConfig[],
  used: readonly string[],
  person: string | null,
): string[] {
  if (person !== null) return []
  return servers
    .filter((s) => used.some((t) => t.startsWith(`${s.name}__`)))
    .filter((s) => connectionOwner(s, null) === null)
    .map((s) => s.name)
}

/** Why a connect link or a callback was refused: the 4xx the route answers. */
export class ConnectRefused extends Error {
  override name = 'ConnectRefused'
  constructor(
    readonly status: 400 | 403 | 404 | 409 | 410 | 502,
    readonly code: string,
    message: string,
  ) {
    super(message)
  }
}

export interface ConnectRequest {
  server: McpServerConfig
  /** Who will follow the link: its grant is recorded as theirs. */
  person: string
  runId: string | null
  itemId: string | null
  scopes: string | null
}

/** A single-use link to connect `server` for `person` (or the deployment). */
export async function createConnectLink(
  env: ConnectionsEnv,
  req: ConnectRequest,
): Promise<{ url: string; expiresAt: number }> {
  const { store, publicUrl, server } = await oauthReady(env, req.server)
  const owner = connectionOwner(server, req.person) ?? req.person
  const secret = randomSecret()
  const pending: PendingAuthorization = {
    server: server.name,
    owner,
    person: req.person,
    runId: req.runId,
    itemId: req.itemId,
    scopes: req.scopes,
  }
  await store.putAuthorization('link', secret, pending, LINK_TTL_MS)
  return {
    url: new URL(`${CONNECT_LINK_PATH}/${secret}`, publicUrl).href,
    expiresAt: Date.now() + LINK_TTL_MS,
  }
}

/**
 * Follows a connect link once: where to send the person's browser, and the nonce to set as its
 * cookie (the callback must come back with it).
 */
export async function followConnectLink(
  env: ConnectionsEnv,
  servers: readonly McpServerConfig[],
  secret: string,
): Promise<{ location: string; browserNonce: string }> {
  const store = await storeOrRefuse(env)
  const taken = await store.takeAuthorization('link', secret)
  if (!taken.ok) throw refusedTake('connect link', taken.why)
  const link = taken.pending
  const server = serverNamed(servers, link.server)
  const { urls } = await oauthReady(env, server)
  const state = randomSecret()
  const browserNonce = randomSecret()
  const begun = await beginMcpAuthorization(
    server as McpServerConfig & { auth: McpServerAuth },
    { records: store, owner: link.owner, ...urls },
    { state, scopes: link.scopes },
  ).catch((err: unknown) => {
    throw new ConnectRefused(502, 'authorization_server_failed', (err as Error).message)
  })
  await store.putAuthorization(
    'state',
    state,
    {
      ...link,
      codeVerifier: begun.codeVerifier,
      issuer: begun.issuer,
      ...(begun.metadataIssuer ? { metadataIssuer: begun.metadataIssuer } : {}),
      ...(begun.resourceMetadataUrl ? { resourceMetadataUrl: begun.resourceMetadataUrl } : {}),
      issInResponse: begun.issInResponse,
      browserHash: await sha256Hex(browserNonce),
    },
    STATE_TTL_MS,
  )
  return { location: begun.url.href, browserNonce }
}

/** The OAuth callback's parameters, as the authorization server sent them. */
export interface CallbackParams {
  state: string | undefined
  code: string | undefined
  iss: string | undefined
  error: string | undefined
}

/** Completes a grant from the callback; what was connected, for whom, and which run waits. */
export async function completeConnect(
  env: ConnectionsEnv,
  servers: readonly McpServerConfig[],
  params: CallbackParams,
  browserNonce: string | undefined,
): Promise<PendingAuthorization> {
  if (!params.state) throw new ConnectRefused(400, 'invalid_state', 'the callback has no state')
  const store = await storeOrRefuse(env)
  const taken = await store.takeAuthorization('state', params.state)
  if (!taken.ok) throw refusedTake('authorization state', taken.why)
  const pending = taken.pending
  if (!browserNonce || (await sha256Hex(browserNonce)) !== pending.browserHash) {
    throw new ConnectRefused(
      403,
      'state_mismatch',
      'this authorization was begun in another browser (or its cookie is gone); follow a new connect link',
    )
  }
  if (params.error) {
    throw new ConnectRefused(
      403,
      'authorization_denied',
      `the authorization server answered "${params.error.slice(0, 100)}"; nothing was connected`,
    )
  }
  if (!params.code) throw new ConnectRefused(400, 'invalid_request', 'the callback has no code')
  const issuer = pending.metadataIssuer ?? pending.issuer!
  if (params.iss !== undefined ? !sameIssuer(params.iss, issuer) : pending.issInResponse) {
    throw new ConnectRefused(
      400,
      'issuer_mismatch',
      `issuer mix-up: the authorization began with ${issuer}, and the answer names ${params.iss ?? 'no issuer'}; nothing was stored`,
    )
  }
  const server = serverNamed(servers, pending.server)
  const { urls } = await oauthReady(env, server)
  await finishMcpAuthorization(
    server as McpServerConfig & { auth: McpServerAuth },
    { records: store, owner: pending.owner, ...urls },
    {
      code: params.code,
      codeVerifier: pending.codeVerifier!,
      grantor: pending.person,
      issuer: pending.issuer!,
      ...(pending.resourceMetadataUrl ? { resourceMetadataUrl: pending.resourceMetadataUrl } : {}),
    },
  ).catch((err: unknown) => {
    throw new ConnectRefused(502, 'authorization_server_failed', (err as Error).message)
  })
  return pending
}

/** Deletes a connection, after asking its authorization server to revoke its tokens. */
export async function deleteConnection(
  env: ConnectionsEnv,
  server: McpServerConfig,
  owner: string,
): Promise<{ deleted: boolean; revoked: boolean }> {
  const store = await storeOrRefuse(env)
  const connection = await store.connection(server.name, owner)
  // One sealed under a key no longer held (MCP_TOKEN_KEY rotated without the old one listed)
  // cannot be revoked, but is still forgotten.
  if (!connection)
    return { deleted: await store.deleteConnection(server.name, owner), revoked: false }
  let revoked = false
  if (server.auth) {
    revoked = await revokeMcpTokens(
      server as McpServerConfig & { auth: McpServerAuth },
      { records: store, owner, ...urlsOf(env) },
      connection,
    ).catch(() => false)
  }
  return { deleted: await store.deleteConnection(server.name, owner), revoked }
}

async function storeOrRefuse(env: ConnectionsEnv): Promise<ConnectionStore> {
  const store = await connectionStoreOf(env)
  if (!store) {
    throw new ConnectRefused(
      404,
      'connections_not_configured',
      'MCP_TOKEN_KEY is not set: no MCP connections are kept',
    )
  }
  return store
}

async function oauthReady(env: ConnectionsEnv, server: McpServerConfig) {
  if (server.auth?.kind !== 'oauth') {
    throw new ConnectRefused(
      409,
      'not_oauth',
      `the ${server.name} MCP server does not use auth "oauth"; nobody connects it`,
    )
  }
  const store = await storeOrRefuse(env)
  const urls = urlsOf(env)
  return { store, publicUrl: urls.publicUrl!, urls, server }
}

function serverNamed(servers: readonly McpServerConfig[], name: string): McpServerConfig {
  const server = servers.find((s) => s.name === name)
  if (!server) {
    throw new ConnectRefused(
      410,
      'server_removed',
      `the ${name} MCP server is no longer in MCP_SERVERS`,
    )
  }
  return server
}

function refusedTake(what: string, why: TakeRefusal): ConnectRefused {
  if (why === 'used')
    return new ConnectRefused(
      409,
      'already_used',
      `this ${what} was used already; it is single use`,
    )
  if (why === 'expired')
    return new ConnectRefused(410, 'expired', `this ${what} has expired; ask for a new one`)
  return new ConnectRefused(404, 'unknown_state', `no such ${what}`)
}

function sameIssuer(a: string, b: string): boolean {
  return a.replace(/\/+$/, '') === b.replace(/\/+$/, '')
}

function randomSecret(): string {
  return toHex(crypto.getRandomValues(new Uint8Array(32)))
}

/**
 * The run's `connect` item that waited for this grant, resolved (approved, with what was
 * connected), so the call is sent again. An item already decided, expired or gone is left as it
 * is: the connection stays for the next call or run.
 */
export async function resolveConnectItem<T extends Rpc.DurableObjectBranded | undefined>(
  runs: DurableObjectNamespace<T>,
  pending: PendingAuthorization,
): Promise<boolean> {
  const stub = runStub(runs, pending.runId!)
  const item = await connectItemOf(stub, pending)
  if (!item) return false
  const out = await stub.decide({
    callId: item.callId,
    decision: 'approve',
    argsHash: item.argsHash,
    by: pending.person,
    kind: 'connect',
    answer: { server: pending.server, owner: pending.owner },
  })
  return out.ok
}

/**
 * The scopes a run's `connect` item asks for (a server's 403 named them: step-up), for a link
 * created for that item: the grant asks for what the call needs, whoever requests the link.
 */
export async function connectItemScopes<T extends Rpc.DurableObjectBranded | undefined>(
  runs: DurableObjectNamespace<T>,
  wanted: Pick<PendingAuthorization, 'runId' | 'itemId' | 'server' | 'owner'>,
): Promise<string | null> {
  if (!wanted.runId || !wanted.itemId) return null
  const item = await connectItemOf(runStub(runs, wanted.runId), wanted)
  const scopes = item?.ask?.details?.scopes
  return typeof scopes === 'string' && scopes ? scopes : null
}

/**
 * Only the item that asked for this very connection: a grant of one person's connection
 * concerns no item that waits for another's (or the deployment's).
 */
async function connectItemOf(
  stub: ReturnType<typeof runStub>,
  wanted: Pick<PendingAuthorization, 'itemId' | 'server' | 'owner'>,
) {
  const view = await stub.get()
  return view?.pendingApprovals.find(
    (p) =>
      p.callId === wanted.itemId &&
      p.kind === 'connect' &&
      p.ask?.details?.server === wanted.server &&
      p.ask?.details?.owner === wanted.owner,
  )
}
