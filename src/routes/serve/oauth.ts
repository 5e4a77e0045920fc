import type { RouteConfig } from '@asteasolutions/zod-to-openapi'
import type { Context, Handler, MiddlewareHandler } from 'hono'
import { accepts } from 'hono/accepts'
import { Hono } from 'hono/tiny'
import {
  authorize,
  OAUTH_ENDPOINTS,
  oauthOff,
  refusalResponse,
  servedCaller,
  servedOAuth,
  SERVED_PATHS,
  type ServedOAuth,
  type ServedPath,
  type ServedRefusal,
} from '../../serve/oauth'
import type { Env } from '../../env'
import type { AppEnv } from '../app-env'
import { declareRoute, DeclaredRoutes } from '../openapi/serve-route'
import { errorResponses, oauthErrorResponses, ROUTE_ERRORS } from '../openapi/openapi-errors'
import type { Parameter } from '../openapi/openapi-parts'

/**
 * The OAuth authorization server for served agents (docs/serving.md#authorization), mounted at the
 * root: its metadata (RFC 8414), each served path's protected-resource metadata (RFC 9728), client
 * registration (RFC 7591), the token endpoint (which also revokes) and the consent page. The
 * library answers all but the consent page; with PUBLIC_URL unset each is a 404 that says so.
 */
export const servedOAuthRoutes = new Hono<AppEnv>()

/** What /openapi.json says of each route here. */
export const servedOAuthDocs = new DeclaredRoutes('/')

/** Every route here is a 404 `oauth_not_configured` while PUBLIC_URL is unset. */
const OFF = errorResponses(ROUTE_ERRORS.servedOAuthMetadata)
const anyJson = (description: string) => ({
  description,
  content: { 'application/json': { schema: { type: 'object' as const } } },
})

/**
 * Serves `route` (answered by the library) and, on its path, the CORS preflight browser-based
 * clients send first, which the library answers too.
 */
function withPreflight<P extends string>(
  route: RouteConfig & { path: P },
  preflightId: string,
  handler: Handler<AppEnv>,
): void {
  servedOAuthDocs.serve(servedOAuthRoutes, route, handler)
  const preflight = declareRoute({
    method: 'options',
    path: route.path,
    operationId: preflightId,
    summary: 'CORS preflight for browser-based clients (answered by the library)',
    tags: ['oauth'],
    security: [],
    responses: { '204': { description: 'The preflight is allowed' }, ...OFF },
  })
  servedOAuthDocs.serve(servedOAuthRoutes, preflight, handler)
}

const serverMetadataRoute = declareRoute({
  method: 'get',
  path: '/.well-known/oauth-authorization-server',
  operationId: 'oauthServerMetadata',
  summary: "The authorization server's metadata (RFC 8414)",
  tags: ['oauth'],
  security: [],
  responses: { '200': anyJson('Issuer, endpoints, scopes, PKCE methods'), ...OFF },
})

withPreflight(
  serverMetadataRoute,
  'oauthServerMetadataPreflight',
  byLibrary((oauth) => oauth.authorizationServer),
)

for (const path of SERVED_PATHS) {
  const name = path.slice(1)
  const resourceMetadataRoute = declareRoute({
    method: 'get',
    path: `/.well-known/oauth-protected-resource${path}`,
    operationId: `${name}ResourceMetadata`,
    summary: `${path}'s protected resource metadata (RFC 9728)`,
    description: `The \`resource_metadata\` a 401 from ${path} names: the resource (PUBLIC_URL${path}), its authorization server and the scopes a client asks for first.`,
    tags: ['oauth'],
    security: [],
    responses: { '200': anyJson('The resource, its authorization servers and scopes'), ...OFF },
  })
  withPreflight(
    resourceMetadataRoute,
    `${name}ResourceMetadataPreflight`,
    byLibrary((oauth) => oauth.resources[path]),
  )
}

const registerRoute = declareRoute({
  method: 'post',
  path: OAUTH_ENDPOINTS.register,
  operationId: 'registerOAuthClient',
  summary: 'Dynamic client registration (RFC 7591)',
  tags: ['oauth'],
  security: [],
  requestBody: {
    required: true,
    content: { 'application/json': { schema: { type: 'object' } } },
  },
  responses: {
    '201': anyJson('The registered client (its client_id; a secret for a confidential one)'),
    ...oauthErrorResponses(
      [400],
      ['invalid_request', 'invalid_client_metadata', 'invalid_redirect_uri'],
    ),
    ...OFF,
  },
})

withPreflight(
  registerRoute,
  'registerOAuthClientPreflight',
  byLibrary((oauth) => oauth.authorizationServer),
)

const TOKEN_ERRORS = [
  'invalid_request',
  'invalid_client',
  'invalid_grant',
  'unauthorized_client',
  'unsupported_grant_type',
  'invalid_scope',
  'invalid_target',
]

const tokenRoute = declareRoute({
  method: 'post',
  path: OAUTH_ENDPOINTS.token,
  operationId: 'oauthToken',
  summary: 'Token endpoint: authorization code (with PKCE) or refresh token; revocation',
  description:
    'A code or refresh exchange checks the API token the grant was made with: if it was revoked or rotated the grant ends (`invalid_grant`), and the access token carries only granted scopes the API token still holds.',
  tags: ['oauth'],
  security: [],
  requestBody: {
    required: true,
    content: { 'application/x-www-form-urlencoded': { schema: { type: 'object' } } },
  },
  responses: {
    '200': anyJson('access_token, token_type, expires_in, refresh_token, scope, resource'),
    ...oauthErrorResponses([400, 401], TOKEN_ERRORS),
    ...OFF,
  },
})

withPreflight(
  tokenRoute,
  'oauthTokenPreflight',
  byLibrary((oauth) => oauth.authorizationServer),
)

const authorizeRoute = declareRoute({
  method: 'get',
  path: OAUTH_ENDPOINTS.authorize,
  operationId: 'oauthAuthorize',
  summary: 'Authorization endpoint: the consent page',
  description:
    'Validates the client, its redirect URI, PKCE (S256) and the resource, then shows a page where a person pastes an edgeloop API token and picks scopes. An invalid request with a checked redirect URI goes back to the client with the error; any other refusal is the JSON error, or for a browser (Accept ranking text/html first) a page saying what is wrong and what to do.',
  tags: ['oauth'],
  security: [],
  parameters: [
    'response_type',
    'client_id',
    'redirect_uri',
    'code_challenge',
    'code_challenge_method',
    'state',
    'scope',
    'resource',
  ].map((name): Parameter => ({ name, in: 'query', required: false, schema: { type: 'string' } })),
  responses: {
    '200': {
      description: 'The consent page (binds its form to this browser with a cookie)',
      content: { 'text/html': { schema: { type: 'string' } } },
    },
    '302': { description: 'Back to the client with an OAuth error' },
    ...orPage(errorResponses(ROUTE_ERRORS.oauthAuthorize)),
  },
})

servedOAuthDocs.serve(servedOAuthRoutes, authorizeRoute, (c) =>
  authorize(c.req.raw, c.env, prefersHtml(c)),
)

const consentRoute = declareRoute({
  method: 'post',
  path: OAUTH_ENDPOINTS.authorize,
  operationId: 'oauthConsent',
  summary: "The person's answer: an API token and the scopes to grant, all the token's",
  tags: ['oauth'],
  security: [],
  requestBody: {
    required: true,
    content: {
      'application/x-www-form-urlencoded': {
        schema: {
          type: 'object',
          required: ['handle'],
          properties: {
            handle: { type: 'string' },
            token: { type: 'string', description: 'An edgeloop API token' },
            scope: { type: 'array', items: { type: 'string' } },
            decision: { type: 'string', enum: ['approve', 'deny'] },
          },
        },
      },
    },
  },
  responses: {
    '302': { description: 'To the client: a code and state, or error=access_denied' },
    ...orPage(errorResponses(ROUTE_ERRORS.oauthConsent)),
  },
})

servedOAuthDocs.serve(servedOAuthRoutes, consentRoute, (c) =>
  authorize(c.req.raw, c.env, prefersHtml(c)),
)

/** Error responses that a browser (Accept: text/html) gets as a page instead. */
function orPage(responses: ReturnType<typeof errorResponses>) {
  const page = {
    schema: { type: 'string', description: 'A page saying what is wrong and what to do next' },
  }
  return Object.fromEntries(
    Object.entries(responses).map(([status, r]) => [
      status,
      { ...r, content: { ...r.content, 'text/html': page } },
    ]),
  )
}

/**
 * Whether a person's browser asks (its Accept ranks text/html above JSON, as a page load or a
 * form post does): a refusal is then a page; any type, JSON or no Accept keep the JSON error.
 */
function prefersHtml(c: Context<AppEnv>): boolean {
  const supports = ['application/json', 'text/html']
  return accepts(c, { header: 'Accept', supports, default: 'application/json' }) === 'text/html'
}

/**
 * Authenticates a served path's request (`/mcp`): an OAuth access token issued for it or an API
 * token (`servedCaller`); sets `caller` and `principal` as `requireAuth` does, and `served` for a
 * scope refusal (`scopeRefusal`). Anything else gets the `401` challenge that starts discovery, in
 * edgeloop's error shape unless `answer` renders it in the route's own (a JSON-RPC error, say).
 */
export function requireServedCaller(
  path: ServedPath,
  answer: (c: Context<AppEnv>, refusal: ServedRefusal) => Response = (_, refusal) =>
    refusalResponse(refusal),
): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const served = await servedCaller(c.req.raw, c.env, path)
    if (served.refusal) return answer(c, served.refusal)
    c.set('caller', served.caller)
    c.set('principal', served.caller.name)
    c.set('served', served)
    await next()
  }
}

/** A route the library answers whole, by the role `pick` names; a 404 that says why without PUBLIC_URL. */
function byLibrary(
  pick: (oauth: ServedOAuth) => {
    fetch(request: Request, env: Env, ctx: ExecutionContext): Promise<Response>
  },
) {
  return (c: Context<AppEnv>) => {
    const oauth = servedOAuth(c.env)
    // Hono types the context more narrowly than Workers; it is the platform's object.
    return oauth
      ? pick(oauth).fetch(c.req.raw, c.env, c.executionCtx as ExecutionContext)
      : oauthOff()
  }
}
