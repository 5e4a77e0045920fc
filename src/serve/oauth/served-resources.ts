import {
  OAuthAuthorizationServer,
  OAuthResourceServer,
  type OAuthResourceTokenValidation,
} from '@cloudflare/workers-oauth-provider'
import { SCOPES } from '../../security/api-tokens'
import { publicUrlOf } from '../../runs/connections/connections'
import type { EnvRecord } from '../../config'
import type { Env } from '../../env'
import { refreshedGrant } from './grant'
import { validateServedToken } from './validate-token'
import type { ServedCaller } from './served-caller-type'

/**
 * The paths served as OAuth protected resources (RFC 9728), each `PUBLIC_URL` + path. A path
 * added here gets its metadata document, its `401` challenge and tokens bound to it alone.
 */
export const SERVED_PATHS = ['/mcp', '/a2a'] as const
export type ServedPath = (typeof SERVED_PATHS)[number]

/** Where the authorization server's own endpoints live (docs/serving.md#authorization). */
export const OAUTH_ENDPOINTS = {
  authorize: '/authorize',
  token: '/token',
  register: '/register',
} as const

/**
 * The scopes any access to a served resource needs, named in its `401` challenge and metadata:
 * an MCP client asks for these first. Listing agents and following runs reads, calling one
 * starts a run.
 */
export const REQUIRED_SCOPES = ['runs:read', 'runs:write'] as const

/** The authorization server and one resource server per served path, for one public origin. */
export interface ServedOAuth {
  origin: string
  authorizationServer: OAuthAuthorizationServer<Env>
  resources: Record<ServedPath, OAuthResourceServer<Env, ServedCaller>>
  /** The canonical resource URL of a served path. */
  resource(path: ServedPath): string
}

// Built once per origin: the library checks its options at construction, and PUBLIC_URL is the
// same for every request of a deployment.
const built = new Map<string, ServedOAuth>()

/**
 * The OAuth roles for this deployment, or null when OAuth is off: without PUBLIC_URL there is no
 * canonical resource to bind tokens to (plain API tokens still work; docs/serving.md).
 */
export function servedOAuth(env: Env): ServedOAuth | null {
  const origin = publicUrlOf(env as unknown as EnvRecord)
  if (origin === undefined) return null
  let oauth = built.get(origin)
  if (!oauth) {
    oauth = build(origin)
    built.set(origin, oauth)
  }
  return oauth
}

function build(origin: string): ServedOAuth {
  const resource = (path: ServedPath) => `${origin}${path}`
  const authorizationServer = new OAuthAuthorizationServer<Env>({
    issuer: origin,
    resources: SERVED_PATHS.map(resource),
    authorizeEndpoint: OAUTH_ENDPOINTS.authorize,
    tokenEndpoint: OAUTH_ENDPOINTS.token,
    clientRegistrationEndpoint: OAUTH_ENDPOINTS.register,
    scopesSupported: [...SCOPES],
    // A code or refresh exchange checks the API token behind the grant again: a revoked or
    // rotated token ends the grant, and its scopes today cap the new access token.
    tokenExchangeCallback: (options) => refreshedGrant(options),
    // Every refusal reaches the client as an RFC 6749 error; a client's bad request is not the
    // operator's to read in the Worker's logs.
    onError: () => undefined,
  })
  const resourceServer = (path: ServedPath) =>
    new OAuthResourceServer<Env, ServedCaller>({
      resourceMetadata: {
        resource: resource(path),
        authorization_servers: [origin],
        resource_name: `edgeloop ${path}`,
      },
      requiredScopes: [...REQUIRED_SCOPES],
      validateToken: (env) => (res, token) =>
        validateServedToken(env, token, res, (t) =>
          authorizationServer.validateToken<unknown>(res, t, env),
        ) as Promise<OAuthResourceTokenValidation<ServedCaller> | null>,
      // The caller is read from the context by servedCaller; the route itself answers.
      handler: { fetch: () => new Response(null, { status: 204 }) },
    })
  const resources = Object.fromEntries(
    SERVED_PATHS.map((path) => [path, resourceServer(path)]),
  ) as ServedOAuth['resources']
  return { origin, authorizationServer, resources, resource }
}
