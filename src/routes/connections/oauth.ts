import { Hono } from 'hono/tiny'
import { loadConfig, type EnvRecord } from '../../config'
import {
  resolveConnectItem,
  clientMetadataDocument,
  clientMetadataUrlOf,
  completeConnect,
  publicUrlOf,
  followConnectLink,
} from '../../runs/connections/connections'
import { sha256Hex } from '../../security/sha256'
import type { AppEnv } from '../app-env'
import { errorBody } from '../api-error'
import { declareRoute, DeclaredRoutes } from '../openapi/serve-route'
import { errorResponses, ROUTE_ERRORS } from '../openapi/openapi-errors'
import type { Parameter } from '../openapi/openapi-parts'
import { refusals } from './connect-refusals'

/**
 * `/oauth/*` (docs/mcp.md#oauth), which a person's browser and the authorization server reach
 * without a token: the client ID metadata document, the connect link (it redirects to the
 * authorization server) and the callback that completes the grant.
 */
export const oauthRoutes = new Hono<AppEnv>()

/** What /openapi.json says of each route here. */
export const oauthDocs = new DeclaredRoutes('/oauth')

const clientMetadataRoute = declareRoute({
  method: 'get',
  path: '/client-metadata.json',
  operationId: 'clientMetadata',
  summary: "edgeloop's OAuth client ID metadata document (its URL is the client id)",
  tags: ['connections'],
  security: [],
  responses: {
    '200': {
      description: 'The client metadata document',
      content: { 'application/json': { schema: { type: 'object' } } },
    },
    ...errorResponses(ROUTE_ERRORS.clientMetadata),
  },
})

oauthDocs.serve(oauthRoutes, clientMetadataRoute, (c) => {
  const publicUrl = publicUrlOf(c.env as unknown as EnvRecord)
  if (!publicUrl) {
    return c.json(errorBody('not_found', 'PUBLIC_URL is not set: no client metadata'), 404)
  }
  c.header('Cache-Control', 'public, max-age=3600')
  // Published elsewhere (MCP_CLIENT_METADATA_URL, served from here by a proxy): that URL is the
  // client id the document must name.
  const clientId = clientMetadataUrlOf(c.env as unknown as EnvRecord)
  return c.json(clientMetadataDocument(publicUrl, clientId))
})

const followConnectLinkRoute = declareRoute({
  method: 'get',
  path: '/connect/{secret}',
  operationId: 'followConnectLink',
  summary: 'A connect link: redirects the browser to the authorization server (single use)',
  tags: ['connections'],
  security: [],
  parameters: [
    {
      name: 'secret',
      in: 'path',
      required: true,
      schema: { type: 'string', pattern: '^[0-9a-f]{64}$' },
    },
  ],
  responses: {
    '302': { description: 'To the authorization server; sets the browser’s cookie' },
    ...errorResponses(ROUTE_ERRORS.followConnectLink),
  },
})

oauthDocs.serve(oauthRoutes, followConnectLinkRoute, async (c) => {
  const servers = loadConfig(c.env).mcpServers
  const followed = await refusals(() => followConnectLink(c.env, servers, c.req.param('secret')))
  if (followed instanceof Response) return followed
  const state = new URL(followed.location).searchParams.get('state') ?? ''
  c.header('Set-Cookie', await browserCookie(state, followed.browserNonce))
  c.header('Cache-Control', 'no-store')
  c.header('Referrer-Policy', 'no-referrer')
  return c.redirect(followed.location, 302)
})

const oauthCallbackRoute = declareRoute({
  method: 'get',
  path: '/callback',
  operationId: 'oauthCallback',
  summary: 'Where the authorization server sends the person back: completes the grant',
  description:
    'The state is single use, expires after 10 minutes, and must come back in the browser that followed the link; `iss` must name the issuer the grant began with. A refusal stores nothing.',
  tags: ['connections'],
  security: [],
  parameters: ['code', 'state', 'iss', 'error'].map((name): Parameter => ({
    name,
    in: 'query',
    required: false,
    schema: { type: 'string' },
  })),
  responses: {
    '200': {
      description: 'Connected: a page that says so',
      content: { 'text/html': { schema: { type: 'string' } } },
    },
    ...errorResponses(ROUTE_ERRORS.oauthCallback),
  },
})

oauthDocs.serve(oauthRoutes, oauthCallbackRoute, async (c) => {
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
