import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'
import type { EnvRecord } from '../../config'
import { eventStreamLimits } from '../../config/event-streams'
import { mcpServing } from '../../config/mcp-serving'
import type { Env } from '../../env'
import { runStub } from '../../runs/types'
import { errorResponse } from '../oauth/error-response'
import { changeNotifications, RESUME_RETRY_MS } from './call-events'
import { itemOffers } from './elicitation'
import { followRun } from './follow-run'
import type { McpCaller } from './mcp-caller'
import { ownRun } from './own-run'
import { checkSession, sessionKey } from './mcp-sessions'
import { callResultOf } from './run-result'
import { eventId, verifyEventId, type CallCursor } from './signed-ids'

/**
 * `GET /mcp` with Last-Event-ID (docs/serving.md#sessions-and-resumption): the rest of a
 * tools/call's stream that was closed (by the server at MCP_WAIT_SECONDS, or by the network).
 * The event id names the run, how far into its stored events the stream had gone and the call's
 * JSON-RPC id, signed for this token: the stream goes on from the run itself (progress as it
 * changes, then the result as the response to the original request id), closed again at
 * MCP_WAIT_SECONDS for the client to come back. Without Last-Event-ID there is nothing to send
 * (no standalone stream): 405, which clients read as "no GET stream here".
 */
export async function resumeCall(env: Env, request: Request, caller: McpCaller): Promise<Response> {
  const lastEventId = request.headers.get('last-event-id')
  if (lastEventId === null) {
    return errorResponse(
      405,
      'method_not_allowed',
      'GET /mcp only resumes the stream of a call (with Last-Event-ID); this server sends nothing outside a call, so it opens no standalone stream',
      { allow: ['OPTIONS', 'POST'] },
      new Headers({ Allow: 'OPTIONS, POST' }),
    )
  }
  if (!request.headers.get('accept')?.includes('text/event-stream')) {
    return errorResponse(
      406,
      'not_acceptable',
      'GET /mcp answers text/event-stream: send Accept: text/event-stream',
    )
  }
  const checked = await checkSession(env, request, caller)
  if ('refusal' in checked) return checked.refusal
  const key = sessionKey(env)
  if (!checked.session || !key) {
    return errorResponse(
      400,
      'session_required',
      'resuming a stream needs the Mcp-Session-Id that initialize answered',
    )
  }
  const cursor = await verifyEventId(key, lastEventId.trim(), caller.name)
  const stub = cursor ? await ownRun(env, caller, cursor.run) : null
  if (!cursor || !stub) {
    return errorResponse(
      404,
      'stream_not_found',
      `Last-Event-ID names no stream of token "${caller.name}" to resume; call the tool again`,
    )
  }
  const body = new TransformStream<Uint8Array, Uint8Array>()
  const writer = body.writable.getWriter()
  const write = (text: string) => writer.write(new TextEncoder().encode(text))
  const send = async (message: JSONRPCMessage) =>
    write(`id: ${await eventId(key, caller.name, cursor)}\ndata: ${JSON.stringify(message)}\n\n`)
  const offers = itemOffers(key, caller, checked.session)
  const following = followOn(env, caller, cursor, request.signal, send, write, offers)
  following
    .catch(async (err: unknown) => {
      const message = err instanceof Error ? err.message : String(err)
      await send({ jsonrpc: '2.0', id: cursor.request, error: { code: -32603, message } })
    })
    .finally(() => writer.close().catch(() => {}))
  return new Response(body.readable, {
    headers: {
      'Content-Type': 'text/event-stream',
      'Cache-Control': 'no-cache, no-transform',
      'Mcp-Session-Id': request.headers.get('mcp-session-id')!,
    },
  })
}

/** Follows the run from the cursor: its changes, then its result; or stops at the deadline. */
async function followOn(
  env: Env,
  caller: McpCaller,
  cursor: CallCursor,
  signal: AbortSignal,
  send: (message: JSONRPCMessage) => Promise<void>,
  write: (text: string) => Promise<void>,
  offers: ReturnType<typeof itemOffers>,
): Promise<void> {
  await write(`retry: ${RESUME_RETRY_MS}\n\n`)
  const { view } = await followRun(runStub(env.RUNS, cursor.run), cursor.run, {
    holder: caller.name,
    limits: eventStreamLimits(env as unknown as EnvRecord),
    waitMs: mcpServing(env as unknown as EnvRecord).waitMs,
    signal,
    after: cursor.seq,
    onChange: async (changed, seq) => {
      const progress = cursor.progress + (cursor.progressToken !== undefined ? 1 : 0)
      Object.assign(cursor, { seq, progress })
      for (const n of changeNotifications(changed, cursor.progressToken, progress)) {
        await send({ jsonrpc: '2.0', ...n })
      }
      for (const offer of offers ? await offers(changed) : []) await send(offer)
    },
  })
  if (view) await send({ jsonrpc: '2.0', id: cursor.request, result: callResultOf(env, view) })
}
