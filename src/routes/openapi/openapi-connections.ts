import { errorResponses, ROUTE_ERRORS } from './openapi-errors'
import { bearer, json, ok } from './openapi-parts'

const serverName = {
  name: 'server',
  in: 'path',
  required: true,
  description: 'The MCP server, as named in MCP_SERVERS.',
  schema: { type: 'string', pattern: '^[a-z][a-z0-9_-]{0,31}$' },
}

/** MCP connections (docs/mcp.md#oauth): the API, and the routes a person's browser follows. */
export const connectionPaths = {
  '/v1/connections': {
    get: {
      operationId: 'listConnections',
      summary: 'MCP connections and who granted them (never their tokens)',
      description: 'A token limited to its own runs sees its own connections and the deployment’s.',
      tags: ['connections'],
      security: bearer,
      responses: {
        '200': ok('The connections', 'ConnectionList'),
        ...errorResponses(ROUTE_ERRORS.listConnections),
      },
    },
  },
  '/v1/connections/{server}/link': {
    post: {
      operationId: 'createConnectLink',
      summary: 'A single-use link (15 minutes) that starts granting a connection',
      description:
        'For a per-person server, any token gets a link for its own connection; the deployment’s connection needs approvals:write. Open the link in a browser: it redirects to the authorization server, which sends the person back to /oauth/callback. A link for a run’s `connect` item (`runId`, `itemId`) asks for the scopes the item names unless `scopes` is given; without either, the scope of the server’s own challenge.',
      tags: ['connections'],
      security: bearer,
      parameters: [serverName],
      requestBody: { required: false, ...json('ConnectLinkRequest') },
      responses: {
        '201': ok('The link', 'ConnectLink'),
        ...errorResponses(ROUTE_ERRORS.createConnectLink),
      },
    },
  },
  '/v1/connections/{server}': {
    delete: {
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
    },
  },
  '/oauth/client-metadata.json': {
    get: {
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
    },
  },
  '/oauth/connect/{secret}': {
    get: {
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
    },
  },
  '/oauth/callback': {
    get: {
      operationId: 'oauthCallback',
      summary: 'Where the authorization server sends the person back: completes the grant',
      description:
        'The state is single use, expires after 10 minutes, and must come back in the browser that followed the link; `iss` must name the issuer the grant began with. A refusal stores nothing.',
      tags: ['connections'],
      security: [],
      parameters: ['code', 'state', 'iss', 'error'].map((name) => ({
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
    },
  },
}
