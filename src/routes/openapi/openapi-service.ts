import { json, ok } from './openapi-parts'

/**
 * The document's public service paths (app.ts): liveness, readiness and the document itself.
 * None takes a credential, a body or a parameter a client can get wrong, so none answers a 4xx
 * (scripts/openapi-lint-ignore.yaml says why the lint accepts that).
 */

/** Any value asks for the deep check: the route reads only whether `deep` is there. */
const deep = {
  name: 'deep',
  in: 'query',
  required: false,
  description:
    'Present (any value, even `0` or empty): check every setting as `/readyz` does, and answer `Ready` or `503 misconfigured`. Absent: liveness only.',
  schema: { type: 'string' },
  example: '1',
}

const misconfigured = {
  description:
    'Error: misconfigured. Every bad setting at once, in `details.problems` (each with its variable); runs cannot start until they are fixed.',
  ...json('Misconfigured'),
}

export const servicePaths = {
  '/healthz': {
    get: {
      operationId: 'health',
      summary: 'Liveness; with `deep`, every setting checked',
      tags: ['service'],
      security: [],
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
        '503': misconfigured,
      },
    },
  },
  '/readyz': {
    get: {
      operationId: 'readiness',
      summary: 'Every setting checked; ready or the list of problems',
      tags: ['service'],
      security: [],
      responses: {
        '200': ok('Ready: every setting is good (warnings for those probably not meant)', 'Ready'),
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
