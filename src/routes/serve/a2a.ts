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
import { servedCaller, type ServedRefusal } from '../../serve/oauth'
import { readRawBody, refuseDeepJson } from '../body'
import { declareRoute, DeclaredRoutes } from '../openapi/serve-route'
import { a2aCardOperation, a2aOperation } from '../openapi/openapi-a2a'

/**
 * A2A (docs/serving.md#a2a): the agent card, public, and the JSON-RPC endpoint, which takes an
 * API token or an OAuth access token issued for /a2a as a bearer token. A request the HTTP layer refuses (no or a bad token, a body too
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
    if (err instanceof ServedRefusalError) return rpcRefusal(servedRefusalOf(err.refusal), null)
    throw err
  }
  return answerJsonRpc(c.env, asked.caller, new URL(c.req.url).origin, asked.body)
})

/** The token's caller and the request's JSON, within the API's body limits (routes/body.ts). */
async function authenticatedBody(
  c: Context<AppEnv>,
): Promise<{ caller: A2aCaller; body: unknown }> {
  // An API token, or an OAuth access token issued for /a2a (docs/serving.md#authorization);
  // the scope each method needs is checked by the method (serve/a2a/a2a-caller.ts).
  const served = await servedCaller(c.req.raw, c.env, '/a2a')
  if (served.refusal) throw new ServedRefusalError(served.refusal)
  const raw = await readRawBody(c.req.raw)
  refuseDeepJson(raw)
  let body: unknown
  try {
    body = JSON.parse(raw)
  } catch (err) {
    throw new ApiError(
      400,
      'malformed_json',
      `the body is not valid JSON: ${(err as Error).message}`,
    )
  }
  const { name, scopes, runs, client } = served.caller
  return { caller: { name, scopes, runs, ...(client ? { client } : {}) }, body }
}

/** A refused caller (no, a bad or another resource's token; a scope missing): its challenge too. */
class ServedRefusalError extends Error {
  constructor(readonly refusal: ServedRefusal) {
    super(refusal.message)
  }
}

function servedRefusalOf(refusal: ServedRefusal) {
  return {
    status: refusal.status,
    code: RPC_CODES.invalidRequest,
    message: refusal.message,
    reason: refusal.code,
    headers: refusal.headers,
  }
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
