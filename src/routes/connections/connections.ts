import { Hono } from 'hono/tiny'
import type { Context } from 'hono'
import { loadConfig, type EnvRecord, type ServiceConfig } from '../../config'
import {
  resolveConnectItem,
  connectItemScopes,
  clientMetadataDocument,
  completeConnect,
  connectionOwner,
  publicUrlOf,
  ConnectRefused,
  connectionStoreOf,
  createConnectLink,
  deleteConnection,
  followConnectLink,
} from '../../runs/connections/connections'
import { sha256Hex } from '../../security/sha256'
import type { AppEnv } from '../app-env'
import { ApiError, errorBody } from '../api-error'
import { requireAuth } from '../api/auth'
import { parseJsonBody } from '../body'
import { ConnectLinkBody } from '../api/schemas'

/**
 * MCP connections (docs/mcp.md#oauth). `/v1/connections`: list them (never their tokens), get a
 * single-use link to grant one, delete one. `/oauth/*`, which a person's browser and the
 * authorization server reach without a token: the client ID metadata document, the connect link
 * (it redirects to the authorization server) and the callback that completes the grant.
 *
 * Who may do what: a token grants and deletes its own connection (`token:<its name>`) to a
 * per-person server; the deployment's connection, or another person's, needs `approvals:write`
 * (the scope of those who decide what runs may do).
 */
export const connectionRoutes = new Hono<AppEnv>()
export const oauthRoutes = new Hono<AppEnv>()

connectionRoutes.get('/', requireAuth(), async (c) => {
  const store = await connectionStoreOf(c.env)
  const caller = c.var.caller
  const mine = caller.kind === 'token' && caller.runs === 'own' ? `token:${caller.name}` : undefined
  const all = store ? await store.list() : []
  const connections = mine ? all.filter((x) => x.owner === mine || x.owner === 'deployment') : all
  const servers = loadConfig(c.env).mcpServers.flatMap((s) =>
    s.auth
      ? [
          {
            name: s.name,
            auth: s.auth.kind,
            owner: s.auth.kind === 'oauth' ? s.auth.owner : ('deployment' as const),
          },
        ]
      : [],
  )
  return c.json({ servers, connections })
})

connectionRoutes.post('/:server/link', requireAuth({ scope: () => null }), async (c) => {
  const server = serverOf(c)
  const person = tokenPerson(c)
  const body = parseJsonBody(c.var.rawBody, ConnectLinkBody, c.req.header('content-type') ?? null, {
    emptyAs: {},
  })
  mayGrant(c, server, person)
  const runId = body.runId ?? null
  const itemId = body.itemId ?? null
  const owner = connectionOwner(server, person) ?? person
  const scopes =
    body.scopes ??
    (await connectItemScopes(c.env.RUNS, { runId, itemId, server: server.name, owner }))
  const link = await refusals(() =>
    createConnectLink(c.env, { server, person, runId, itemId, scopes }),
  )
  if (link instanceof Response) return link
  return c.json({ server: server.name, owner: connectionOwner(server, person), ...link }, 201)
})

connectionRoutes.delete('/:server', requireAuth({ scope: () => null }), async (c) => {
  const server = serverOf(c)
  const person = tokenPerson(c)
  const owner = c.req.query('owner') ?? connectionOwner(server, person) ?? person
  if (owner !== person && !c.var.caller.scopes.includes('approvals:write')) {
    throw new ApiError(
      403,
      'forbidden',
      `only a token with approvals:write deletes the connection of ${owner}; yours is ${person}`,
    )
  }
  const result = await refusals(() => deleteConnection(c.env, server, owner))
  if (result instanceof Response) return result
  if (!result.deleted) {
    throw new ApiError(404, 'not_found', `no ${server.name} connection for ${owner}`)
  }
  return c.json({ server: server.name, owner, deleted: true, revoked: result.revoked })
})

oauthRoutes.get('/client-metadata.json', (c) => {
  const publicUrl = publicUrlOf(c.env as unknown as EnvRecord)
  if (!publicUrl) {
    return c.json(errorBody('not_found', 'PUBLIC_URL is not set: no client metadata'), 404)
  }
  c.header('Cache-Control', 'public, max-age=3600')
  return c.json(clientMetadataDocument(publicUrl))
})

oauthRoutes.get('/connect/:secret', async (c) => {
  const servers = loadConfig(c.env).mcpServers
  const followed = await refusals(() => followConnectLink(c.env, servers, c.req.param('secret')))
  if (followed instanceof Response) return followed
  const state = new URL(followed.location).searchParams.get('state') ?? ''
  c.header('Set-Cookie', await browserCookie(state, followed.browserNonce))
  c.header('Cache-Control', 'no-store')
  c.header('Referrer-Policy', 'no-referrer')
  return c.redirect(followed.location, 302)
})

oauthRoutes.get('/callback', async (c) => {
  const servers = loadConfig(c.env).mcpServers
  const q = (name: string) => c.req.query(name)
  const state = q('state') ?? ''
  const nonce = readCookie(c.req.header('Cookie'), await cookieName(state))
  const done = await refusals(() =>
    completeConnect(
      c.env,
      servers,
      { state: q('state'), code: q('code'), iss: q('iss'), error: q('error') },
      nonce,
    ),
  )
  if (done instanceof Response) return done
  if (done.runId && done.itemId) await resolveConnectItem(c.env.RUNS, done)
  c.header('Cache-Control', 'no-store')
  c.header('Set-Cookie', `${await cookieName(state)}=; Path=/; Secure; HttpOnly; Max-Age=0`)
  return c.html(connectedPage(done.server))
})

function serverOf(c: Context<AppEnv>): ServiceConfig['mcpServers'][number] {
  const name = c.req.param('server')
  const server = loadConfig(c.env).mcpServers.find((s) => s.name === name)
  if (!server) throw new ApiError(404, 'not_found', `no MCP server "${name}" in MCP_SERVERS`)
  return server
}

function tokenPerson(c: Context<AppEnv>): string {
  const caller = c.var.caller
  if (caller.kind !== 'token') {
    throw new ApiError(403, 'forbidden', 'a webhook signature grants no connection; use a token')
  }
  return `token:${caller.name}`
}

/** A per-person server's own connection: any token; the deployment's: approvals:write. */
function mayGrant(
  c: Context<AppEnv>,
  server: ServiceConfig['mcpServers'][number],
  person: string,
): void {
  if (connectionOwner(server, person) === person) return
  if (c.var.caller.scopes.includes('approvals:write')) return
  throw new ApiError(
    403,
    'forbidden',
    `the ${server.name} MCP server's connection is the deployment's: granting it needs a token with approvals:write`,
  )
}

/** Runs `work`; a ConnectRefused becomes its 4xx (or 502) JSON answer. */
async function refusals<T>(work: () => Promise<T>): Promise<T | Response> {
  try {
    return await work()
  } catch (err) {
    if (!(err instanceof ConnectRefused)) throw err
    return Response.json(errorBody(err.code, err.message), {
      status: err.status,
      headers: { 'Cache-Control': 'no-store' },
    })
  }
}

/** The browser that followed the link, by a cookie only this authorization's callback reads. */
async function cookieName(state: string): Promise<string> {
  return `__Host-edgeloop_connect_${(await sha256Hex(state)).slice(0, 16)}`
}

async function browserCookie(state: string, nonce: string): Promise<string> {
  return `${await cookieName(state)}=${nonce}; Path=/; Secure; HttpOnly; SameSite=Lax; Max-Age=600`
}

function readCookie(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const [k, ...v] = part.trim().split('=')
    if (k === name) return v.join('=')
  }
  return undefined
}

function connectedPage(server: string): string {
  const safe = server.replace(/[^a-z0-9_-]/g, '')
  return `<!doctype html><meta charset="utf-8"><title>Connected</title><p>${safe} is connected. The run that asked for it goes on; you can close this tab.</p>`
}
