import { errorResponses, oauthErrorResponses as oauthErrors, ROUTE_ERRORS } from './openapi-errors'

const OFF = errorResponses(ROUTE_ERRORS.servedOAuthMetadata)
const anyJson = (description: string) => ({
  description,
  content: { 'application/json': { schema: { type: 'object' } } },
})
const preflight = (operationId: string) => ({
  operationId,
  summary: 'CORS preflight for browser-based clients (answered by the library)',
  tags: ['oauth'],
  security: [],
  responses: { '204': { description: 'The preflight is allowed' }, ...OFF },
})

const TOKEN_ERRORS = [
  'invalid_request',
  'invalid_client',
  'invalid_grant',
  'unauthorized_client',
  'unsupported_grant_type',
  'invalid_scope',
  'invalid_target',
]

/**
 * The authorization server for served agents (docs/serving.md#authorization), answered by
 * @cloudflare/workers-oauth-provider except the consent page. Every path is a 404
 * `oauth_not_configured` while PUBLIC_URL is unset.
 */
export const servedOAuthPaths = {
  '/.well-known/oauth-authorization-server': {
    get: {
      operationId: 'oauthServerMetadata',
      summary: "The authorization server's metadata (RFC 8414)",
      tags: ['oauth'],
      security: [],
      responses: { '200': anyJson('Issuer, endpoints, scopes, PKCE methods'), ...OFF },
    },
    options: preflight('oauthServerMetadataPreflight'),
  },
  '/.well-known/oauth-protected-resource/mcp': {
    get: {
      operationId: 'mcpResourceMetadata',
      summary: "/mcp's protected resource metadata (RFC 9728)",
      description:
        'The `resource_metadata` a 401 from /mcp names: the resource (PUBLIC_URL/mcp), its authorization server and the scopes a client asks for first.',
      tags: ['oauth'],
      security: [],
      responses: { '200': anyJson('The resource, its authorization servers and scopes'), ...OFF },
    },
    options: preflight('mcpResourceMetadataPreflight'),
  },
  '/register': {
    post: {
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
        ...oauthErrors(
          [400],
          ['invalid_request', 'invalid_client_metadata', 'invalid_redirect_uri'],
        ),
        ...OFF,
      },
    },
    options: preflight('registerOAuthClientPreflight'),
  },
  '/token': {
    post: {
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
        ...oauthErrors([400, 401], TOKEN_ERRORS),
        ...OFF,
      },
    },
    options: preflight('oauthTokenPreflight'),
  },
  '/authorize': {
    get: {
      operationId: 'oauthAuthorize',
      summary: 'Authorization endpoint: the consent page',
      description:
        'Validates the client, its redirect URI, PKCE (S256) and the resource, then shows a page where a person pastes an edgeloop API token and picks scopes. An invalid request with a checked redirect URI goes back to the client with the error.',
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
      ].map((name) => ({ name, in: 'query', required: false, schema: { type: 'string' } })),
      responses: {
        '200': {
          description: 'The consent page (binds its form to this browser with a cookie)',
          content: { 'text/html': { schema: { type: 'string' } } },
        },
        '302': { description: 'Back to the client with an OAuth error' },
        ...errorResponses(ROUTE_ERRORS.oauthAuthorize),
      },
    },
    post: {
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
        ...errorResponses(ROUTE_ERRORS.oauthConsent),
      },
    },
  },
}
