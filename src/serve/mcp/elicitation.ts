import type {
  ElicitRequestFormParams,
  JSONRPCMessage,
  JSONRPCRequest,
} from '@modelcontextprotocol/sdk/types.js'
import type { Env } from '../../env'
import type { DecideRequest, RunView } from '../../runs/types'
import { errorResponse } from '../oauth/error-response'
import type { McpCaller } from './mcp-caller'
import { ownRun } from './own-run'
import { offerId, verifyOfferId, type McpSession, type OfferedItem } from './signed-ids'

/**
 * A run's pending items offered to the calling person through MCP elicitation
 * (docs/serving.md#elicitation): when the client declared it and the token may decide items
 * (approvals:write, the approvers' rules of docs/human-in-the-loop.md), an approval is offered as
 * a form of approve/deny and a question as its own form. The request's id names the item, signed
 * for the token; the client's answer, POSTed back, is decided as the API decides it, so the first
 * decision wins wherever it is made (Slack, the console, the API, here).
 */

type PendingItem = RunView['pendingApprovals'][number]

const PRIMITIVE = new Set(['string', 'number', 'integer', 'boolean'])

/** Whether `caller` may decide the items of its runs (docs/human-in-the-loop.md). */
export const mayDecide = (caller: McpCaller) => caller.scopes.includes('approvals:write')

/** The elicitation/create request offering `item` of run `runId`, or null when it cannot be. */
export async function offerOf(
  key: string,
  caller: McpCaller,
  runId: string,
  item: PendingItem,
): Promise<JSONRPCRequest | null> {
  const form = formOf(item)
  if (!form) return null
  const offered: OfferedItem = {
    run: runId,
    call: item.callId,
    kind: item.kind as OfferedItem['kind'],
    hash: item.argsHash,
    form: form.shape,
  }
  const params: ElicitRequestFormParams = {
    mode: 'form',
    message: form.message,
    requestedSchema: form.schema as ElicitRequestFormParams['requestedSchema'],
  }
  return {
    jsonrpc: '2.0',
    id: await offerId(key, caller.name, offered),
    method: 'elicitation/create',
    params,
  }
}

interface Form {
  message: string
  schema: { type: 'object'; properties: Record<string, unknown>; required?: string[] }
  shape: OfferedItem['form']
}

function formOf(item: PendingItem): Form | null {
  if (item.kind === 'approval') {
    const args = JSON.stringify(item.args)
    return {
      message: `Run ${item.tool} with ${args.length > 500 ? `${args.slice(0, 500)}…` : args}? ${item.reason}`,
      schema: {
        type: 'object',
        properties: {
          decision: { type: 'string', title: 'Decision', enum: ['approve', 'deny'] },
          reason: { type: 'string', title: 'Reason (optional)', maxLength: 500 },
        },
        required: ['decision'],
      },
      shape: 'decision',
    }
  }
  if (item.kind !== 'question' || !item.ask) return null
  const { message, choices, schema } = item.ask
  const answer = (property: Record<string, unknown>): Form => ({
    message,
    schema: { type: 'object', properties: { answer: property }, required: ['answer'] },
    shape: 'answer',
  })
  if (choices) return answer({ type: 'string', title: 'Answer', enum: choices })
  if (!schema) return answer({ type: 'string', title: 'Answer' })
  if (PRIMITIVE.has(schema.type as string)) return answer(schema)
  const properties = schema.properties as Record<string, { type?: unknown }> | undefined
  // Elicitation forms are flat: an object of strings, numbers, booleans and enums.
  if (schema.type !== 'object' || !properties) return null
  if (!Object.values(properties).every((p) => PRIMITIVE.has(p?.type as string))) return null
  return {
    message,
    schema: {
      type: 'object',
      properties,
      ...(Array.isArray(schema.required) ? { required: schema.required as string[] } : {}),
    },
    shape: 'object',
  }
}

/**
 * The client's response to an offer: decides the item as the API does, with the token as the
 * decider. 202 when decided (or when the client cancelled or failed: nothing decided, the item
 * waits for someone else); a refusal says why, the item left as it was: already decided
 * elsewhere (409, naming by whom), an answer the question refuses (400).
 */
export async function answerOffer(
  env: Env,
  key: string,
  caller: McpCaller,
  message: JSONRPCMessage & { id: string },
): Promise<Response> {
  const offered = await verifyOfferId(key, message.id, caller.name)
  const stub = offered ? await ownRun(env, caller, offered.run) : null
  if (!offered || !stub) {
    return errorResponse(
      404,
      'offer_not_found',
      `this response answers no elicitation this server sent token "${caller.name}"`,
    )
  }
  if (!mayDecide(caller)) {
    return errorResponse(
      403,
      'forbidden',
      `token "${caller.name}" lacks the scope approvals:write, so it decides no pending item`,
      { required: 'approvals:write' },
    )
  }
  if (!('result' in message)) return accepted()
  const result = message.result as { action?: unknown; content?: Record<string, unknown> }
  if (result.action === 'cancel') return accepted()
  const decision = decisionOf(offered, result)
  if (!decision) {
    return errorResponse(
      400,
      'invalid_answer',
      'an elicitation result must be accept (with the form content), decline or cancel',
    )
  }
  const out = await stub.decide({
    callId: offered.call,
    kind: offered.kind,
    argsHash: offered.hash,
    by: caller.name,
    ...decision,
  })
  if (out.ok) return accepted()
  const refused = out as Extract<typeof out, { ok: false }>
  const status = refused.code === 'invalid_answer' || refused.code === 'invalid_args' ? 400 : 409
  return errorResponse(status, refused.code, refused.message, {
    runId: offered.run,
    callId: offered.call,
    ...(refused.decidedBy ? { decidedBy: refused.decidedBy } : {}),
    ...(refused.decision ? { decision: refused.decision } : {}),
    ...(refused.problems ? { problems: refused.problems } : {}),
  })
}

type Decision = Pick<DecideRequest, 'decision' | 'reason' | 'answer'>

function decisionOf(
  offered: OfferedItem,
  result: { action?: unknown; content?: Record<string, unknown> },
): Decision | null {
  if (result.action === 'decline') {
    return { decision: 'deny', reason: 'declined in the MCP client (elicitation)' }
  }
  if (result.action !== 'accept') return null
  const content = result.content ?? {}
  if (offered.form === 'decision') {
    const reason = typeof content.reason === 'string' && content.reason ? content.reason : null
    if (content.decision !== 'approve' && content.decision !== 'deny') return null
    return { decision: content.decision, ...(reason ? { reason } : {}) }
  }
  return { decision: 'approve', answer: offered.form === 'object' ? content : content.answer }
}

function accepted(): Response {
  return new Response(null, { status: 202 })
}

/**
 * What a call's stream offers as its run changes: each pending item of the run once (a resumed
 * stream offers again what still waits). Null when nothing is offered: no session key, a client
 * that did not declare elicitation, or a token that may not decide.
 */
export function itemOffers(
  key: string | null,
  caller: McpCaller,
  session: McpSession | null,
): ((view: RunView) => Promise<JSONRPCRequest[]>) | null {
  if (!key || !session?.elicitation || !mayDecide(caller)) return null
  const offered = new Set<string>()
  return async (view) => {
    const out: JSONRPCRequest[] = []
    for (const item of view.pendingApprovals) {
      const seen = `${item.callId}/${item.argsHash}`
      if (offered.has(seen)) continue
      offered.add(seen)
      const offer = await offerOf(key, caller, view.id, item)
      if (offer) out.push(offer)
    }
    return out
  }
}
