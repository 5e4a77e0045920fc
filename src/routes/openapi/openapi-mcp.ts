import type { RouteConfig } from '@asteasolutions/zod-to-openapi'
import { bearer } from './openapi-parts'

/** A JSON-RPC 2.0 error response, as /mcp answers its refusals (routes/serve/mcp.ts). */
const rpcError = (description: string, codes: string[]) => ({
  description,
  content: {
    'application/json': {
      schema: {
        type: 'object',
        required: ['jsonrpc', 'id', 'error'],
        properties: {
          jsonrpc: { type: 'string', enum: ['2.0'] },
          id: { type: ['string', 'number', 'null'] },
          error: {
            type: 'object',
            required: ['code', 'message'],
            properties: {
              code: { type: 'integer', description: 'The JSON-RPC error code.' },
              message: { type: 'string', description: 'What went wrong and what to do.' },
              data: {
                type: 'object',
                properties: { code: { type: 'string', enum: codes }, details: {} },
              },
            },
          },
        },
      },
    },
  },
})

const message = {
  type: 'object',
  required: ['jsonrpc'],
  properties: { jsonrpc: { type: 'string', enum: ['2.0'] } },
  additionalProperties: true,
}

/**
 * `POST /mcp`: one JSON-RPC endpoint (MCP Streamable HTTP, protocol 2025-11-25), not a REST
 * resource; the methods it answers are MCP's, described in docs/serving.md, not here.
 */
export const mcpOperation = {
  operationId: 'mcp',
  summary: 'The agents as an MCP server (Streamable HTTP, JSON-RPC 2.0)',
  description:
    'Each agent of the deployment is an MCP tool. One JSON-RPC message per request (initialize, ping, tools/list, tools/call, tasks/get, tasks/result, tasks/cancel, logging/setLevel, notifications). Stateless: no Mcp-Session-Id. A request answers `application/json` or a `text/event-stream` carrying progress and log notifications, then the response. The token needs runs:write. See docs/serving.md.',
  tags: ['mcp'],
  security: bearer,
  parameters: [
    {
      name: 'MCP-Protocol-Version',
      in: 'header',
      required: false,
      description: 'The protocol version initialize agreed on (after initialize).',
      schema: { type: 'string', example: '2025-11-25' },
    },
  ],
  requestBody: {
    required: true,
    content: { 'application/json': { schema: message } },
  },
  responses: {
    '200': {
      description: 'The JSON-RPC response (a JSON-RPC error for a bad method or arguments)',
      content: {
        'application/json': { schema: message },
        'text/event-stream': {
          schema: {
            type: 'string',
            description: 'Server-Sent Events; each `data:` is one JSON-RPC message',
          },
        },
      },
    },
    '202': { description: 'A notification or response from the client, accepted' },
    '400': rpcError('Error: a body that is not JSON-RPC, too deep, or not UTF-8', [
      'json_too_deep',
      'invalid_encoding',
      'client_disconnected',
    ]),
    '401': rpcError('Error: no token or a bad one (the answer carries WWW-Authenticate)', [
      'unauthorized',
      'auth_not_configured',
      'invalid_signature',
    ]),
    '403': rpcError('Error: a token without runs:write, or a foreign page origin', [
      'forbidden',
      'origin_not_allowed',
    ]),
    '405': rpcError('Error: a method other than POST (no standalone stream)', [
      'method_not_allowed',
    ]),
    '406': rpcError('Error: Accept does not take application/json and text/event-stream', []),
    '413': rpcError('Error: the body is over 64 KB', ['body_too_large']),
    '415': rpcError('Error: Content-Type is not application/json', []),
    '503': rpcError('Error: a setting is bad', ['misconfigured']),
  },
} as unknown as Omit<RouteConfig, 'method' | 'path'>

/** `OPTIONS /mcp`: the CORS preflight of a browser page the Origin check lets through. */
export const mcpPreflightOperation = {
  operationId: 'mcpPreflight',
  summary: "CORS preflight for /mcp (a browser page of PUBLIC_URL's origin or MCP_ALLOWED_ORIGINS)",
  description:
    'Answers Access-Control-Allow-Origin only for an origin the Origin check allows (docs/serving.md#who-may-call); any other page gets the 204 without it, and the browser sends nothing.',
  tags: ['mcp'],
  security: [],
  responses: { '204': { description: 'The preflight answer (Access-Control-* headers)' } },
} as unknown as Omit<RouteConfig, 'method' | 'path'>
