import type { Context } from 'hono'
import { Hono } from 'hono/tiny'
import { loadConfig } from '../../config'
import {
  A2A_PATH,
  AGENT_CARD_PATH,
  agentCard,
  answerJsonRpc,
  rpcRefusal,
  RPC_CODES,
  type A2aCaller,
} from '../../serve/a2a'
import type { AppEnv } from '../app-env'
import { ApiError } from '../api-error'
import { requireAuth } from '../api/auth'
import { refuseDeepJson } from '../body'
import { declareRoute, DeclaredRoutes } from '../openapi/serve-route'
import { a2aCardOperation, a2aOperation } from '../openapi/openapi-a2a'

/**
 * A2A (docs/serving.md#a2a): the agent card, public, and the JSON-RPC endpoint, which takes an
 * API token as a bearer token. A request the HTTP layer refuses (no or a bad token, a body too
 * large, too deep or not JSON) is answered as a JSON-RPC error, never started.
 */
export const a2aRoutes = new Hono<AppEnv>()

/** What /openapi.json says of the card and the endpoint (both at the top of the path space). */
export const a2aDocs = new DeclaredRoutes('/')

const getCard = declareRoute({ method: 'get', path: AGENT_CARD_PATH, ...a2aCardOperation })
const postA2a = declareRoute({ method: 'post', path: A2A_PATH, ...a2aOperation })

a2aDocs.serve(a2aRoutes, getCard, (c) => {
  const card = agentCard(loadConfig(c.env).agents, new URL(c.req.url).origin)
  // The card changes only with a deployment's settings.
  return c.json(card as object, 200, { 'Cache-Control': 'public, max-age=60' })
})

a2aDocs.serve(a2aRoutes, postA2a, async (c) => {
  let asked: { caller: A2aCaller; body: unknown }
  try {
    asked = await authenticatedBody(c)
  } catch (err) {
    if (err instanceof ApiError) return rpcRefusal(refusalOf(err), null)
    throw err
  }
  return answerJsonRpc(c.env, asked.caller, new URL(c.req.url).origin, asked.body)
})

/** The token's caller and the request's JSON, within the API's body limits (routes/body.ts). */
async function authenticatedBody(
  c: Context<AppEnv>,
): Promise<{ caller: A2aCaller; body: unknown }> {
  // The scope each method needs is checked by the method (serve/a2a/a2a-caller.ts).
  await requireAuth({ scope: () => null })(c, async () => {})
  const principal = c.var.caller
  if (principal.kind !== 'token') {
    throw new ApiError(
      401,
      'unauthorized',
      'A2A takes an API token: send Authorization: Bearer <token>',
    )
  }
  refuseDeepJson(c.var.rawBody)
  let body: unknown
  try {
    body = JSON.parse(c.var.rawBody)
  } catch (err) {
    throw new ApiError(
      400,
      'malformed_json',
      `the body is not valid JSON: ${(err as Error).message}`,
    )
  }
  const { name, scopes, runs } = principal
  return { caller: { name, scopes, runs }, body }
}

/** The HTTP layer's refusal as a JSON-RPC error: unparsable JSON is a parse error. */
function refusalOf(err: ApiError) {
  const parse = err.code === 'malformed_json' || err.code === 'invalid_encoding'
  return {
    status: err.status,
    code: parse ? RPC_CODES.parseError : RPC_CODES.invalidRequest,
    message: err.message,
    reason: err.code,
  }
}
