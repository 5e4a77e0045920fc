import { formatSSEErrorEvent, formatSSEEvent } from '@a2a-js/sdk'
import { isLegacyJsonRpcMethod } from '@a2a-js/sdk/compat/v0_3'
import { LegacyJsonRpcTransportHandler } from '@a2a-js/sdk/compat/v0_3/server'
import { A2A_ERROR_CODE, ContentTypeNotSupportedError } from '@a2a-js/sdk/errors'
import { JsonRpcTransportHandler, ServerCallContext } from '@a2a-js/sdk/server'
import type { Env } from '../../env'
import { HEARTBEAT_MS } from '../../runs/events/event-stream'
import type { A2aCaller } from './a2a-caller'
import { RunsRequestHandler } from './runs-request-handler'

type RpcId = string | number | null

const HEARTBEAT = new TextEncoder().encode(': heartbeat\n\n')

/** A JSON-RPC error the endpoint answers before any method runs (body, token, scope). */
export interface RpcRefusal {
  status: number
  code: number
  message: string
  /** The API's error code (docs/http-api.md), as the error's detail. */
  reason: string
  /** Headers to send (a 401's or 403's `WWW-Authenticate` challenge); default: a 401's own. */
  headers?: Headers
}

/**
 * One JSON-RPC request to the A2A endpoint (docs/serving.md#a2a), already authenticated and
 * within the body limits: the v1.0 methods (SendMessage, SendStreamingMessage, GetTask,
 * CancelTask, SubscribeToTask) through the SDK's JsonRpcTransportHandler, and the v0.3 names
 * (`message/send`, `message/stream`, `tasks/get`, `tasks/cancel`, `tasks/resubscribe`) through
 * its v0.3 handler, both onto the same runs. Streams answer as Server-Sent Events.
 */
export async function answerJsonRpc(
  env: Env,
  caller: A2aCaller,
  origin: string,
  body: unknown,
): Promise<Response> {
  const handler = new RunsRequestHandler(env, caller, origin)
  const method = (body as { method?: unknown } | null)?.method
  const legacy = isLegacyJsonRpcMethod(method)
  const id = rpcIdOf(body)
  const refusal = refuseMissingParams(body, legacy) ?? refuseFileParts(body)
  if (refusal) return rpcJson({ jsonrpc: '2.0', id, error: refusal })
  const transport = legacy
    ? new LegacyJsonRpcTransportHandler(handler)
    : new JsonRpcTransportHandler(handler)
  const context = new ServerCallContext({ requestedVersion: legacy ? '0.3' : '1.0' })
  const answer = await transport.handle(body as Record<string, unknown>, context)
  if (!(Symbol.asyncIterator in answer)) return rpcJson(answer)
  const stream = answer[Symbol.asyncIterator]()
  // An error before the first event (a refused start) is a plain JSON-RPC answer, not a stream.
  let first: IteratorResult<unknown>
  try {
    first = await stream.next()
  } catch (err) {
    return rpcJson({ jsonrpc: '2.0', id, error: mapError(legacy, err) })
  }
  const encoder = new TextEncoder()
  let next: Promise<IteratorResult<unknown>> | undefined = Promise.resolve(first)
  // Pulled: an event is read from the run only when the client has taken the one before. While
  // nothing changes, a comment every HEARTBEAT_MS keeps proxies from closing the stream.
  const events = new ReadableStream<Uint8Array>({
    async pull(controller) {
      let timer: ReturnType<typeof setTimeout> | undefined
      try {
        next ??= stream.next()
        const tick = new Promise<'tick'>((resolve) => {
          timer = setTimeout(() => resolve('tick'), HEARTBEAT_MS)
        })
        const result = await Promise.race([next, tick])
        if (result === 'tick') return controller.enqueue(HEARTBEAT)
        next = undefined
        if (result.done) controller.close()
        else controller.enqueue(encoder.encode(formatSSEEvent(result.value)))
      } catch (err) {
        const error = { jsonrpc: '2.0', id, error: mapError(legacy, err) }
        controller.enqueue(encoder.encode(formatSSEErrorEvent(error)))
        controller.close()
      } finally {
        clearTimeout(timer)
      }
    },
    async cancel() {
      // The client went away: stop following the run (its event stream closes with it).
      await stream.return(undefined)
    },
  })
  return new Response(events, {
    headers: {
      'Content-Type': 'text/event-stream',
      'Cache-Control': 'no-cache, no-transform',
      // Proxies such as nginx would otherwise buffer the stream.
      'X-Accel-Buffering': 'no',
    },
  })
}

/** A refusal before any method runs, as a JSON-RPC error answer with its HTTP status. */
export function rpcRefusal(refusal: RpcRefusal, body: unknown): Response {
  return rpcJson(
    {
      jsonrpc: '2.0',
      id: rpcIdOf(body),
      error: {
        code: refusal.code,
        message: refusal.message,
        data: [
          {
            '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
            reason: refusal.reason,
            domain: 'edgeloop',
          },
        ],
      },
    },
    refusal.status,
    refusal.headers ??
      (refusal.status === 401 ? { 'WWW-Authenticate': 'Bearer realm="edgeloop"' } : {}),
  )
}

/** The JSON-RPC error codes the refusals before a method use. */
export const RPC_CODES = {
  parseError: A2A_ERROR_CODE.PARSE_ERROR,
  invalidRequest: A2A_ERROR_CODE.INVALID_REQUEST,
} as const

function rpcJson(body: unknown, status = 200, headers: HeadersInit = {}): Response {
  const all = new Headers(headers)
  all.set('Content-Type', 'application/json')
  return new Response(JSON.stringify(body), { status, headers: all })
}

function mapError(legacy: boolean, err: unknown) {
  return legacy
    ? LegacyJsonRpcTransportHandler.mapToLegacyJSONRPCError(err)
    : JsonRpcTransportHandler.mapToJSONRPCError(err)
}

function rpcIdOf(body: unknown): RpcId {
  const id = (body as { id?: unknown } | null)?.id
  return typeof id === 'string' || (typeof id === 'number' && Number.isInteger(id)) ? id : null
}

/** The v1.0 methods served (docs/serving.md#methods); the v0.3 names are the SDK's. */
const SERVED_METHODS = [
  'SendMessage',
  'SendStreamingMessage',
  'GetTask',
  'CancelTask',
  'SubscribeToTask',
]

/**
 * A request without an object as `params`: the SDK answers it "Invalid method parameters." even
 * for a method it does not know, which names neither the method nor the problem.
 */
function refuseMissingParams(body: unknown, legacy: boolean) {
  const { method, params } = (body ?? {}) as { method?: unknown; params?: unknown }
  if (params !== null && typeof params === 'object' && !Array.isArray(params)) return undefined
  if (typeof method !== 'string' || !(legacy || SERVED_METHODS.includes(method))) {
    return {
      code: A2A_ERROR_CODE.METHOD_NOT_FOUND,
      message: `${JSON.stringify(method ?? null)} is not a method this endpoint serves; the methods are ${SERVED_METHODS.join(', ')} (and their v0.3 names)`,
    }
  }
  return {
    code: A2A_ERROR_CODE.INVALID_PARAMS,
    message: `${method} needs params, an object${/message/i.test(method) ? ' ({"message": {…}})' : ' ({"id": "<task id>"})'}`,
  }
}

/**
 * File parts are refused before the SDK reads them: its codec decodes bytes with Node's
 * `Buffer`, which Workers do not have, and an agent's task is text anyway.
 */
function refuseFileParts(body: unknown) {
  const parts = (body as { params?: { message?: { parts?: unknown } } } | null)?.params?.message
    ?.parts
  if (!Array.isArray(parts)) return undefined
  const i = parts.findIndex(
    (p) => p && typeof p === 'object' && ('raw' in p || 'url' in p || 'file' in p),
  )
  if (i < 0) return undefined
  return JsonRpcTransportHandler.mapToJSONRPCError(
    new ContentTypeNotSupportedError(
      `params.message.parts[${i}] is a file part; send the task as text parts (and structured input as data parts)`,
    ),
  )
}
