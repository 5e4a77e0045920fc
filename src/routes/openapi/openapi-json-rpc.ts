/**
 * JSON-RPC 2.0's envelope (https://www.jsonrpc.org/specification), as /mcp and /a2a answer it:
 * a request (or a notification, without `id`), a response with `result` or `error`. What goes
 * inside `params` and `result` is the protocol's own (MCP's, A2A's), described by each route.
 */

const jsonrpc = { const: '2.0' }

const id = {
  type: ['string', 'integer', 'null'],
  description:
    "A request's id, and the same in the response that answers it; a notification has none.",
}

/** A JSON-RPC request or notification whose `method` is described by `method`. */
export function jsonRpcRequest(method: Record<string, unknown>): Record<string, unknown> {
  return {
    type: 'object',
    required: ['jsonrpc', 'method'],
    properties: { jsonrpc, id, method, params: { type: 'object' } },
  }
}

/**
 * A JSON-RPC response: `result` (what `result` says it is) or `error`, whose `code` is one of
 * those `codes` describes and whose `data` is `data` (the protocol's).
 */
export function jsonRpcResponse(input: {
  result: string
  codes: string
  data?: Record<string, unknown>
}): Record<string, unknown> {
  const data = input.data ?? { description: 'More about the error, as the protocol defines it.' }
  return {
    type: 'object',
    required: ['jsonrpc', 'id'],
    properties: {
      jsonrpc,
      id,
      result: { description: input.result },
      error: {
        type: 'object',
        required: ['code', 'message'],
        properties: {
          code: { type: 'integer', description: input.codes },
          message: { type: 'string' },
          data,
        },
      },
    },
  }
}

/** A stream of JSON-RPC messages: Server-Sent Events whose `data:` lines each hold one. */
export function jsonRpcEventStream(): Record<string, unknown> {
  return {
    type: 'string',
    description: 'Server-Sent Events; each `data:` is one JSON-RPC message',
  }
}
