import { errorResponses, ROUTE_ERRORS } from './openapi-errors'
import { ok, ref } from './openapi-parts'

/**
 * The document's public service paths (app.ts): liveness, readiness and the document itself.
 * Liveness and the document take no credential, body or parameter a client can get wrong, so
 * they answer no 4xx (scripts/openapi-lint-ignore.yaml says why the lint accepts that); the
 * readiness report takes an optional token (service:read) and answers 401/403 for a bad one.
 */

/** Any value asks for the deep check: the route reads only whether `deep` is there. */
const deep = {
  name: 'deep',
  in: 'query',
  required: false,
  description:
    'Present (any value, even `0` or empty): check every setting as `/readyz` does, and answer `Ready` or `503 misconfigured` (the full report with a service:read token, else the summary). Absent: liveness only.',
  schema: { type: 'string' },
  example: '1',
}

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
const optionalBearer = [{}, { bearer: [] }]
const readinessErrors = errorResponses(ROUTE_ERRORS.readiness)

export const servicePaths = {
  '/healthz': {
    get: {
      operationId: 'health',
      summary: 'Liveness; with `deep`, every setting checked',
      tags: ['service'],
      security: optionalBearer,
      parameters: [deep],
      responses: {
        '200': {
          description:
            'Without `deep`: the service is up (`Health`). With `deep`: ready (`Ready`).',
          content: {
            'application/json': {
              schema: {
                oneOf: [
                  { $ref: '#/components/schemas/Health' },
                  { $ref: '#/components/schemas/Ready' },
                ],
              },
            },
          },
        },
        ...readinessErrors,
        '503': misconfigured,
      },
    },
  },
  '/readyz': {
    get: {
      operationId: 'readiness',
      summary:
        'Every setting checked; ready or the problems (the full report and the MCP servers with a service:read token)',
      tags: ['service'],
      security: optionalBearer,
      responses: {
        '200': ok('Ready: every setting is good (warnings for those probably not meant)', 'Ready'),
        ...readinessErrors,
        '503': misconfigured,
      },
    },
  },
  '/openapi.json': {
    get: {
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
    },
  },
}
