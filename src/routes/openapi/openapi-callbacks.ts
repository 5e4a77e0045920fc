import { MAX_DELIVERY_ATTEMPTS } from '../../runs/outbox/outbox'
import { ref } from './openapi-parts'

/** POST /v1/runs `callbacks`: what a run's callback_url receives and how its answer is read. */
export const runCallbacks = {
  runCallback: {
    '{$request.body#/callback_url}': {
      post: {
        operationId: 'runCallback',
        summary: 'What callback_url receives, signed with X-Edgeloop-Signature',
        description:
          'The final RunResult once the run ends; with `callback_events: "all"` also each RunEvent as it happens (header X-Edgeloop-Event names its type).',
        security: [],
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: { oneOf: [ref('RunResult'), ref('RunEvent')] },
            },
          },
        },
        responses: {
          '2XX': { description: 'Received' },
          '4XX': {
            description: `Not received: sent again with backoff (${MAX_DELIVERY_ATTEMPTS} attempts in all), after its Retry-After when given`,
          },
          default: {
            description: 'Any other answer (5xx, a redirect) is retried as a 4XX is',
          },
        },
      },
    },
  },
}
