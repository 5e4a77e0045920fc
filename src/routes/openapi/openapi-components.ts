import {
  ConnectionDeleted,
  ConnectionList,
  ConnectLink,
  AgentDetail,
  AgentList,
  ApprovalPage,
  Cancelling,
  CreatedRun,
  DecisionResult,
  Deleted,
  Health,
  Me,
  Misconfigured,
  MisconfiguredSummary,
  Ready,
  RunApprovals,
  RunEvent,
  RunPage,
  RunListEvent,
  RunExport,
  RunResult,
  RunView,
  StoredObservation,
} from '../../api/response-schemas'
import {
  AnswerBody,
  CancelBody,
  ConnectLinkBody,
  CreateRunBody,
  DecisionBody,
} from '../api/schemas'
import { a2aSchemas } from './openapi-a2a'
import { mcpSchemas } from './openapi-mcp'
import { schema } from './openapi-parts'

/**
 * The document's components: how each caller authenticates, and every request and response
 * schema (request schemas are the zod schemas that validate requests, response schemas those
 * the tests parse real responses with).
 */
export function openApiComponents(): Record<string, unknown> {
  return {
    securitySchemes: {
      bearer: {
        type: 'http',
        scheme: 'bearer',
        description:
          'A token of API_TOKENS (stored as its SHA-256) with scopes runs:write, runs:read, approvals:write, runs:delete, service:read (the full readiness report), or the legacy API_TOKEN (all scopes, named api). Decisions are recorded under the token name. A token limited to its own runs ("runs": "own") gets 404 run_not_found for any other run, and lists only its own.',
      },
      webhookSignature: {
        type: 'apiKey',
        in: 'header',
        name: 'X-Edgeloop-Signature',
        description:
          'v1=<hex HMAC-SHA256 of "{X-Edgeloop-Timestamp}.{raw body}"> with WEBHOOK_SECRET; 300 s window; starts runs only (POST /v1/runs), each signature once. Callbacks are signed c1= (never accepted inbound).',
      },
      webhookTimestamp: {
        type: 'apiKey',
        in: 'header',
        name: 'X-Edgeloop-Timestamp',
        description: 'Unix seconds, signed together with the body.',
      },
      slackSignature: {
        type: 'apiKey',
        in: 'header',
        name: 'X-Slack-Signature',
        description:
          'Slack request signing with SLACK_SIGNING_SECRET (and X-Slack-Request-Timestamp).',
      },
    },
    schemas: {
      CreateRun: schema(CreateRunBody, 'input'),
      Decision: schema(DecisionBody, 'input'),
      Answer: schema(AnswerBody, 'input'),
      Cancel: schema(CancelBody, 'input'),
      CreatedRun: schema(CreatedRun, 'output'),
      RunView: schema(RunView, 'output'),
      RunResult: schema(RunResult, 'output'),
      DecisionResult: schema(DecisionResult, 'output'),
      Cancelling: schema(Cancelling, 'output'),
      RunPage: schema(RunPage, 'output'),
      ApprovalPage: schema(ApprovalPage, 'output'),
      RunEvent: schema(RunEvent, 'output'),
      RunListEvent: schema(RunListEvent, 'output'),
      StoredObservation: schema(StoredObservation, 'output'),
      RunApprovals: schema(RunApprovals, 'output'),
      Health: schema(Health, 'output'),
      Ready: schema(Ready, 'output'),
      Misconfigured: schema(Misconfigured, 'output'),
      MisconfiguredSummary: schema(MisconfiguredSummary, 'output'),
      Me: schema(Me, 'output'),
      AgentList: schema(AgentList, 'output'),
      Agent: schema(AgentDetail, 'output'),
      Deleted: schema(Deleted, 'output'),
      RunExport: schema(RunExport, 'output'),
      ConnectionList: schema(ConnectionList, 'output'),
      ConnectLinkRequest: schema(ConnectLinkBody, 'input'),
      ConnectLink: schema(ConnectLink, 'output'),
      ConnectionDeleted: schema(ConnectionDeleted, 'output'),
      ...mcpSchemas,
      ...a2aSchemas,
    },
  }
}
