import { Hono } from 'hono/tiny'
import type { AppEnv } from './app-env'
import { readiness } from './readiness'
import { declareRoute, DeclaredRoutes } from './openapi/serve-route'
import { errorResponses, ROUTE_ERRORS } from './openapi/openapi-errors'
import { ok, ref } from './openapi/openapi-parts'

/**
 * The service's public paths: liveness and readiness (docs/operations.md#readiness), each
 * declared once with what /openapi.json says of it; the document itself is served by app.ts,
 * which knows every group. Liveness and the document take no credential, body or parameter a
 * client can get wrong, so they answer no 4xx (scripts/openapi-lint-ignore.yaml says why the
 * lint accepts that); the readiness report takes an optional token (service:read) and answers
 * 401/403 for a bad one.
 */
export const serviceRoutes = new Hono<AppEnv>()

/** What /openapi.json says of each route here. */
export const serviceDocs = new DeclaredRoutes('/')

const misconfigured = {
  description:
    'Error: misconfigured; runs cannot start until it is fixed. With a service:read token, every bad setting at once in `details.problems` (each with its variable); without credentials, only how many and which variables (`details.problemCount`, `details.variables`).',
  content: {
    'application/json': {
      schema: { anyOf: [ref('Misconfigured'), ref('MisconfiguredSummary')] },
    },
  },
}

/** No token: the settings' verdict only. A token: it needs service:read for the full report. */
const optionalBearer: Record<string, string[]>[] = [{}, { bearer: [] }]

const healthRoute = declareRoute({
  method: 'get',
  path: '/healthz',
  operationId: 'health',
  summary: 'Liveness; with `deep`, every setting checked',
  tags: ['service'],
  security: optionalBearer,
  parameters: [
    {
      // Any value asks for the deep check: the route reads only whether `deep` is there.
      name: 'deep',
      in: 'query',
      required: false,
      description:
        'Present (any value, even `0` or empty): check every setting as `/readyz` does, and answer `Ready` or `503 misconfigured` (the full report with a service:read token, else the summary). Absent: liveness only.',
      schema: { type: 'string' },
      example: '1',
    },
  ],
  responses: {
    '200': {
      description: 'Without `deep`: the service is up (`Health`). With `deep`: ready (`Ready`).',
      content: { 'application/json': { schema: { oneOf: [ref('Health'), ref('Ready')] } } },
    },
    ...errorResponses(ROUTE_ERRORS.readiness),
    '503': misconfigured,
  },
})

serviceDocs.serve(serviceRoutes, healthRoute, (c) =>
  c.req.query('deep') === undefined ? c.json({ ok: true, service: 'edgeloop' }) : readiness(c),
)

const readinessRoute = declareRoute({
  method: 'get',
  path: '/readyz',
  operationId: 'readiness',
  summary:
    'Every setting checked; ready or the problems (the full report and the MCP servers with a service:read token)',
  tags: ['service'],
  security: optionalBearer,
  responses: {
    '200': ok('Ready: every setting is good (warnings for those probably not meant)', 'Ready'),
    ...errorResponses(ROUTE_ERRORS.readiness),
    '503': misconfigured,
  },
})

serviceDocs.serve(serviceRoutes, readinessRoute, readiness)

/** `GET /openapi.json`: served by app.ts, which gives it every group's declarations. */
export const openApiRoute = declareRoute({
  method: 'get',
  path: '/openapi.json',
  operationId: 'openapi',
  summary: 'This document',
  tags: ['service'],
  security: [],
  responses: {
    '200': {
      description: 'OpenAPI 3.1',
      content: { 'application/json': { schema: { type: 'object' } } },
    },
  },
})
