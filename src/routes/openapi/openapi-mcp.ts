import type { RouteConfig } from '@asteasolutions/zod-to-openapi'
import { errorResponses } from './openapi-errors'
import { jsonRpcEventStream, jsonRpcRequest, jsonRpcResponse } from './openapi-json-rpc'
import { bearer, json, ref } from './openapi-parts'

const sessionHeader = {
  name: 'Mcp-Session-Id',
  in: 'header',
  required: false,
  description: 'The session initialize answered (docs/serving.md#sessions-and-resumption).',
  schema: { type: 'string' },
}

/** The messages /mcp takes and answers, as components of the document (and so client types). */
export const mcpSchemas = {
  McpRequest: jsonRpcRequest({
    type: 'string',
    description:
      'initialize, ping, tools/list, tools/call, tasks/get, tasks/result, tasks/cancel, logging/setLevel, or a notification (notifications/initialized, notifications/cancelled, …); the params are MCP’s (protocol 2025-11-25).',
  }),
  McpResponse: jsonRpcResponse({
    result:
      'The method’s result as MCP defines it (InitializeResult, ListToolsResult, CallToolResult, CreateTaskResult, GetTaskResult, …); from the client, an elicitation’s ElicitResult.',
    codes:
      'JSON-RPC codes: -32700 parse error, -32600 invalid request, -32601 unknown method, -32602 invalid params (an unknown tool, arguments the agent refuses), -32603 internal, -32001 request timeout (a call that outlasted its wait; its run goes on).',
  }),
  McpMessage: {
    description:
      'One JSON-RPC message: a request or notification, or the client’s response to an elicitation this server sent.',
    anyOf: [ref('McpRequest'), ref('McpResponse')],
  },
}

/**
 * `POST /mcp`: one JSON-RPC endpoint (MCP Streamable HTTP, protocol 2025-11-25), not a REST
 * resource; the methods it answers are MCP's, described in docs/serving.md, not here.
 */
export const mcpOperation = {
  operationId: 'mcp',
  summary: 'The agents as an MCP server (Streamable HTTP, JSON-RPC 2.0)',
  description:
    'Each agent of the deployment is an MCP tool. One JSON-RPC message per request (initialize, ping, tools/list, tools/call, tasks/get, tasks/result, tasks/cancel, logging/setLevel, notifications). initialize answers an Mcp-Session-Id (signed, nothing kept on the server) when MCP_SESSION_SECRET or MCP_TOKEN_KEY is set; a tools/call in a session streams with SSE event ids and may be closed before its result, to be resumed with GET; a pending item of its run may be offered through the client elicitation, whose response POSTed back decides it (202, or a refusal such as 409 already_decided). A request answers `application/json` or a `text/event-stream` carrying progress and log notifications, then the response; protocol errors are JSON-RPC errors, refusals before the protocol (token, Origin, body) the API error answers. The token (an API token or an OAuth access token for /mcp) needs runs:write. See docs/serving.md.',
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
    sessionHeader,
  ],
  requestBody: {
    required: true,
    ...json('McpMessage'),
  },
  responses: {
    '200': {
      description: 'The JSON-RPC response (a JSON-RPC error for a bad method or arguments)',
      content: {
        'application/json': { schema: ref('McpResponse') },
        'text/event-stream': { schema: jsonRpcEventStream() },
      },
    },
    '202': { description: 'A notification or response from the client, accepted' },
    ...errorResponses({
      // A client's answer to an elicitation (docs/serving.md#elicitation) is decided as the API's.
      400: ['json_too_deep', 'invalid_encoding', 'client_disconnected', 'invalid_answer'],
      404: ['session_not_found', 'offer_not_found'],
      409: ['already_decided', 'hash_mismatch', 'not_pending', 'run_finished', 'run_cancelling'],
      // The challenge is in WWW-Authenticate (docs/serving.md#authorization).
      401: ['unauthorized', 'invalid_token'],
      403: ['forbidden', 'insufficient_scope', 'origin_not_allowed'],
      405: ['method_not_allowed'],
      413: ['body_too_large'],
      500: ['internal_error'],
      503: ['misconfigured', 'token_check_failed'],
    }),
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

/**
 * `GET /mcp`: resumes a tools/call's SSE stream from its Last-Event-ID (docs/serving.md); without
 * one it is 405, as MCP's transport spec lets a server without a standalone stream answer.
 */
export const mcpResumeOperation = {
  operationId: 'mcpResume',
  summary: "Resume a tools/call's SSE stream (Last-Event-ID, in a session)",
  description:
    "Sends the rest of a call's stream: progress and log notifications as its run changes, then the tools/call's JSON-RPC response (the original request id). Closed again at MCP_WAIT_SECONDS; the client comes back with the last event id it got. Needs the Mcp-Session-Id of the token that made the call.",
  tags: ['mcp'],
  security: bearer,
  parameters: [
    {
      name: 'Last-Event-ID',
      in: 'header',
      required: false,
      description: 'The id of the last event the client got on the call stream.',
      schema: { type: 'string' },
    },
    sessionHeader,
  ],
  responses: {
    '200': {
      description: 'The rest of the stream',
      content: {
        'text/event-stream': { schema: jsonRpcEventStream() },
      },
    },
    ...errorResponses({
      400: ['session_required'],
      401: ['unauthorized', 'invalid_token'],
      403: ['forbidden', 'insufficient_scope', 'origin_not_allowed'],
      404: ['session_not_found', 'stream_not_found'],
      405: ['method_not_allowed'],
      406: ['not_acceptable'],
      500: ['internal_error'],
      503: ['misconfigured', 'token_check_failed'],
    }),
  },
} as unknown as Omit<RouteConfig, 'method' | 'path'>
