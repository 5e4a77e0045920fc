import { toJSONSchema, type $ZodType } from 'zod/v4/core'
import { RUN_ID_PATTERN } from '../kernel/names'
import {
  BudgetOverrides,
  CancelBody,
  CreateRunBody,
  CreatedRun,
  DecisionBody,
  ErrorBody,
} from './schemas'

const schema = (s: $ZodType) => {
  const { $schema: _s, ...rest } = toJSONSchema(s, { io: 'input' }) as Record<string, unknown>
  return rest
}

const errors = (...codes: number[]) =>
  Object.fromEntries(
    codes.map((code) => [
      String(code),
      {
        description: 'Error',
        content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
      },
    ]),
  )

const json = (ref: string) => ({
  content: { 'application/json': { schema: { $ref: `#/components/schemas/${ref}` } } },
})
const runId = {
  name: 'id',
  in: 'path',
  required: true,
  schema: { type: 'string', pattern: RUN_ID_PATTERN.source },
}

let cached: unknown

/** The OpenAPI 3.1 document, generated from the same zod schemas that validate requests. */
export function openApiDocument(): unknown {
  cached ??= {
    openapi: '3.1.0',
    info: {
      title: 'edgeloop',
      version: '0.1.0',
      description: 'A ReAct agent kernel on Cloudflare Workers.',
    },
    components: {
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description:
            'A token of API_TOKENS (stored as its SHA-256) with scopes runs:write, runs:read, approvals:write, or the legacy API_TOKEN (all scopes, named api). Decisions are recorded under the token name.',
        },
        webhookSignature: {
          type: 'apiKey',
          in: 'header',
          name: 'X-Edgeloop-Signature',
          description:
            'v1=<hex HMAC-SHA256 of "{X-Edgeloop-Timestamp}.{raw body}"> with WEBHOOK_SECRET; 300 s window; starts runs only (POST /v1/runs), each signature once. Callbacks are signed c1= (never accepted inbound).',
        },
      },
      schemas: {
        CreateRun: schema(CreateRunBody),
        Budget: schema(BudgetOverrides),
        Decision: schema(DecisionBody),
        Cancel: schema(CancelBody),
        CreatedRun: schema(CreatedRun),
        Error: schema(ErrorBody),
      },
    },
    security: [{ bearer: [] }, { webhookSignature: [] }],
    paths: {
      '/healthz': {
        get: { summary: 'Liveness', security: [], responses: { '200': { description: 'OK' } } },
      },
      '/v1/runs': {
        post: {
          summary: 'Start a run',
          parameters: [
            {
              name: 'Idempotency-Key',
              in: 'header',
              required: false,
              schema: { type: 'string', maxLength: 200 },
            },
          ],
          requestBody: { required: true, ...json('CreateRun') },
          responses: {
            '202': { description: 'Started', ...json('CreatedRun') },
            '200': {
              description: 'Already started with this Idempotency-Key',
              ...json('CreatedRun'),
            },
            ...errors(400, 401, 409, 413, 415),
          },
        },
      },
      '/v1/runs/{id}': {
        get: {
          summary: 'Run status, steps so far, usage, pending approvals',
          parameters: [runId],
          responses: { '200': { description: 'The run' }, ...errors(401, 404) },
        },
      },
      '/v1/runs/{id}/trace': {
        get: {
          summary: 'The RunResult trace',
          parameters: [runId],
          responses: { '200': { description: 'RunResult' }, ...errors(401, 404) },
        },
      },
      '/v1/runs/{id}/approvals/{callId}': {
        post: {
          summary: 'Approve or deny a pending side-effecting call',
          parameters: [
            runId,
            { name: 'callId', in: 'path', required: true, schema: { type: 'string' } },
          ],
          requestBody: { required: true, ...json('Decision') },
          responses: {
            '200': { description: 'Decision recorded' },
            ...errors(400, 401, 404, 409, 413),
          },
        },
      },
      '/v1/runs/{id}/cancel': {
        post: {
          summary: 'Cancel a run at its next transition',
          parameters: [runId],
          requestBody: { required: false, ...json('Cancel') },
          responses: { '202': { description: 'Cancelling' }, ...errors(400, 401, 404, 409) },
        },
      },
      '/slack/commands': {
        post: {
          summary: 'Slack slash command (Slack-signed)',
          security: [],
          responses: { '200': { description: 'Ack' } },
        },
      },
      '/slack/events': {
        post: {
          summary: 'Slack Events API (Slack-signed)',
          security: [],
          responses: { '200': { description: 'Ack' } },
        },
      },
      '/slack/interactions': {
        post: {
          summary: 'Slack interactivity (Slack-signed)',
          security: [],
          responses: { '200': { description: 'Ack' } },
        },
      },
    },
  }
  return cached
}
