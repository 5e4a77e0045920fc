import { Hono } from 'hono/tiny'
import { SCOPES } from '../../security/api-tokens'
import type { AppEnv } from '../app-env'
import { ApiError } from '../api-error'
import { requireAuth } from './auth'
import type { MeBody } from '../../api/response-schemas'
import { errorResponses, ROUTE_ERRORS } from '../openapi/openapi-errors'
import { bearer, ok } from '../openapi/openapi-parts'
import { declareRoute, DeclaredRoutes } from '../openapi/serve-route'

/**
 * `GET /v1/me`: the bearer token's name and scopes, so a client (the console) offers only what
 * the token may do. Any valid token may ask, whatever its scopes. A webhook signature is not a
 * token (it only starts runs and has no name or scopes to show): 403 forbidden.
 */
export const meRoutes = new Hono<AppEnv>()

/** What /openapi.json says of the route here. */
export const meDocs = new DeclaredRoutes('/v1/me')

const whoAmIRoute = declareRoute({
  method: 'get',
  path: '/',
  operationId: 'whoAmI',
  summary: "The token's name, scopes and which runs it reaches (any valid token; no scope needed)",
  tags: ['service'],
  security: bearer,
  responses: { '200': ok('The token', 'Me'), ...errorResponses(ROUTE_ERRORS.whoAmI) },
})

// Only GET takes the token check: any other method is the app's 405 with Allow, token or not.
meDocs.serve(meRoutes, whoAmIRoute, requireAuth({ scope: () => null }), (c) => {
  const caller = c.var.caller
  if (caller.kind !== 'token') {
    throw new ApiError(
      403,
      'forbidden',
      'a webhook signature is not a token: GET /v1/me describes bearer tokens only; send Authorization: Bearer <token>',
    )
  }
  // In the documented order, whatever order API_TOKENS lists them in.
  const body: MeBody = {
    name: caller.name,
    scopes: SCOPES.filter((scope) => caller.scopes.includes(scope)),
    runs: caller.runs,
  }
  return c.json(body)
})
