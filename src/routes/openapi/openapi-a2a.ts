import type { RouteConfig } from '@asteasolutions/zod-to-openapi'
import { jsonRpcEventStream, jsonRpcRequest, jsonRpcResponse } from './openapi-json-rpc'
import { bearer, json, ref } from './openapi-parts'

/**
 * A2A (docs/serving.md#a2a): the agent card and the JSON-RPC endpoint. Their bodies are the A2A
 * protocol's (v1.0, and v0.3's method names), described here by their envelope: the protocol's
 * own specification defines the messages, tasks and cards inside.
 */

/** The bodies /a2a takes and answers, as components of the document (and so client types). */
export const a2aSchemas = {
  A2aRequest: jsonRpcRequest({
    type: 'string',
    enum: [
      'SendMessage',
      'SendStreamingMessage',
      'GetTask',
      'CancelTask',
      'SubscribeToTask',
      'message/send',
      'message/stream',
      'tasks/get',
      'tasks/cancel',
      'tasks/resubscribe',
    ],
  }),
  A2aResponse: jsonRpcResponse({
    result: 'The method’s result: a Task, or a message/stream event',
    codes:
      'JSON-RPC and A2A codes: -32700 parse error, -32600 invalid request (no or a bad token, a body too large or too deep), -32601 unknown method, -32602 invalid params (an unknown skill, a message without text), -32603 internal, -32001 task not found (also another token’s task), -32002 task not cancelable, -32003 push notifications not supported, -32004 unsupported operation (a missing scope, a message to a task that waits for an approval), -32005 content type not supported (file parts).',
    data: { type: 'array', items: { type: 'object' } },
  }),
}

const refused = (description: string) => ({
  description,
  ...json('A2aResponse'),
})

/** `GET /.well-known/agent-card.json`, declared with its handler (routes/serve/a2a.ts). */
export const a2aCardOperation = {
  operationId: 'a2aAgentCard',
  summary: 'The A2A agent card: every agent of the deployment as a skill',
  tags: ['a2a'],
  security: [],
  responses: {
    '200': {
      description: 'The agent card (A2A v1.0 AgentCard)',
      content: { 'application/json': { schema: { type: 'object' } } },
    },
  },
} as unknown as Omit<RouteConfig, 'method' | 'path'>

/** `POST /a2a`, declared with its handler (routes/serve/a2a.ts). */
export const a2aOperation = {
  operationId: 'a2aJsonRpc',
  summary: 'A2A JSON-RPC: a message starts a run of the skill it names; a task is a run',
  description:
    'Methods SendMessage, SendStreamingMessage, GetTask, CancelTask, SubscribeToTask (v1.0) and message/send, message/stream, tasks/get, tasks/cancel, tasks/resubscribe (v0.3). A method’s error is a JSON-RPC error with HTTP 200; the streaming methods answer Server-Sent Events whose `data:` lines are JSON-RPC responses. The scope a method needs: runs:write to send or cancel, runs:read to read, approvals:write to answer a question.',
  tags: ['a2a'],
  security: bearer,
  requestBody: {
    required: true,
    ...json('A2aRequest'),
  },
  responses: {
    '200': {
      description: 'The JSON-RPC response, or for a stream its events',
      content: {
        'application/json': { schema: ref('A2aResponse') },
        'text/event-stream': { schema: jsonRpcEventStream() },
      },
    },
    '400': refused('Not JSON (-32700), or nested too deeply (-32600)'),
    '401': refused('No API token, or an unknown one (-32600); `WWW-Authenticate: Bearer`'),
    '413': refused('The body is over the size limit (-32600)'),
  },
} as unknown as Omit<RouteConfig, 'method' | 'path'>
