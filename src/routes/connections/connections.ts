import { Hono } from 'hono/tiny'
import type { Context } from 'hono'
import { loadConfig, type ServiceConfig } from '../../config'
import {
  connectionOwner,
  connectionStoreOf,
  createConnectLink,
  deleteConnection,
} from '../../runs/connections/connections'
import type { AppEnv } from '../app-env'
import { ApiError } from '../api-error'
import { requireAuth } from '../api/auth'
import { parseJsonBody } from '../body'
import { ConnectLinkBody } from '../api/schemas'
import { declareRoute, DeclaredRoutes } from '../openapi/serve-route'
import { errorResponses, ROUTE_ERRORS } from '../openapi/openapi-errors'
import { bearer, json, ok, type Parameter } from '../openapi/openapi-parts'
import { refusals } from './connect-refusals'

/**
 * MCP connections (docs/mcp.md#oauth), `/v1/connections`: list them (never their tokens), get a
 * single-use link to grant one (its browser routes are oauth.ts), delete one.
 *
 * Who may do what: a token grants and deletes its own connection (`token:<its name>`) to a
 * per-person server; the deployment's connection, or another person's, needs `approvals:write`
 * (the scope of those who decide what runs may do).
 */
export const connectionRoutes = new Hono<AppEnv>()

/** What /openapi.json says of each route here. */
export const connectionDocs = new DeclaredRoutes('/v1/connections')

const serverName: Parameter = {
  name: 'server',
  in: 'path',
  required: true,
  description: 'The MCP server, as named in MCP_SERVERS.',
  schema: { type: 'string', pattern: '^[a-z][a-z0-9_-]{0,31}$' },
}

const listConnectionsRoute = declareRoute({
  method: 'get',
  path: '/',
  operationId: 'listConnections',
  summary: 'MCP connections and who granted them (never their tokens)',
  description: 'A token limited to its own runs sees its own connections and the deployment’s.',
  tags: ['connections'],
  security: bearer,
  responses: {
    '200': ok('The connections', 'ConnectionList'),
    ...errorResponses(ROUTE_ERRORS.listConnections),
  },
})

connectionDocs.serve(connectionRoutes, listConnectionsRoute, requireAuth(), async (c) => {
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

const createConnectLinkRoute = declareRoute({
  method: 'post',
  path: '/{server}/link',
  operationId: 'createConnectLink',
  summary: 'A single-use link (15 minutes) that starts granting a connection',
  description:
    'For a per-person server, any token gets a link for its own connection; the deployment’s connection needs approvals:write. Open the link in a browser: it redirects to the authorization server, which sends the person back to /oauth/callback.',
  tags: ['connections'],
  security: bearer,
  parameters: [serverName],
  requestBody: { required: false, ...json('ConnectLinkRequest') },
  responses: {
    '201': ok('The link', 'ConnectLink'),
    ...errorResponses(ROUTE_ERRORS.createConnectLink),
  },
})

const anyToken = requireAuth({ scope: () => null })

connectionDocs.serve(connectionRoutes, createConnectLinkRoute, anyToken, async (c) => {
  const server = serverOf(c)
  const person = tokenPerson(c)
  const body = parseJsonBody(c.var.rawBody, ConnectLinkBody, c.req.header('content-type') ?? null, {
    emptyAs: {},
  })
  mayGrant(c, server, person)
  const link = await refusals(() =>
    createConnectLink(c.env, {
      server,
      person,
      runId: body.runId ?? null,
      itemId: body.itemId ?? null,
      scopes: body.scopes ?? null,
    }),
  )
  if (link instanceof Response) return link
  return c.json({ server: server.name, owner: connectionOwner(server, person), ...link }, 201)
})

const deleteConnectionRoute = declareRoute({
  method: 'delete',
  path: '/{server}',
  operationId: 'deleteConnection',
  summary: 'Revoke (at the authorization server, when it can) and forget a connection',
  tags: ['connections'],
  security: bearer,
  parameters: [
    serverName,
    {
      name: 'owner',
      in: 'query',
      required: false,
      description:
        'Whose connection (`deployment`, `token:<name>`, `slack:<user id>`); default: the server’s for this token. Another’s needs approvals:write.',
      schema: { type: 'string' },
    },
  ],
  responses: {
    '200': ok('Deleted', 'ConnectionDeleted'),
    ...errorResponses(ROUTE_ERRORS.deleteConnection),
  },
})

connectionDocs.serve(connectionRoutes, deleteConnectionRoute, anyToken, async (c) => {
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
