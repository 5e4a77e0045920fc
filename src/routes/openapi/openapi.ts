import { RUN_ID_PATTERN } from '../../kernel/names'
import { AGENT_NAME_PATTERN } from '../../config'
import { RUN_STATUSES } from '../../api/enums'
import { runCallbacks } from './openapi-callbacks'
import { servicePaths } from './openapi-service'
import { openApiComponents } from './openapi-components'
import { errorResponses, ROUTE_ERRORS } from './openapi-errors'
import {
  afterSeq,
  bearer,
  consoleFile,
  cursor,
  idempotencyKey,
  json,
  lastEventId,
  limit,
  listAfter,
  listLastEventId,
  ok,
  ref,
  runId,
  slackOperation,
  traceparent,
} from './openapi-parts'

let cached: Record<string, unknown> | undefined

/**
 * The OpenAPI 3.1 document: request schemas are the zod schemas that validate requests, response
 * schemas those the tests parse real responses with. `origin` becomes the one server.
 */
export function openApiDocument(origin: string): unknown {
  cached ??= buildDocument()
  return { ...cached, servers: [{ url: origin, description: 'This deployment' }] }
}

function buildDocument(): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: {
      title: 'edgeloop',
      version: '0.1.0',
      description: 'A ReAct agent kernel on Cloudflare Workers.',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    tags: [
      { name: 'runs', description: 'Start, follow and steer runs' },
      { name: 'agents', description: 'The agents runs may name' },
      { name: 'approvals', description: 'Human approval of side effects' },
      { name: 'service', description: 'Health, readiness and this description' },
      { name: 'slack', description: 'Slack app endpoints' },
    ],
    components: openApiComponents(),
    security: bearer,
    paths: {
      ...servicePaths,
      '/console': consoleFile(
        'consolePage',
        'The web console (asks for an API token)',
        'text/html',
      ),
      '/console/console.js': consoleFile(
        'consoleScript',
        "The console's script",
        'text/javascript',
      ),
      '/console/console.css': consoleFile('consoleStyle', "The console's style sheet", 'text/css'),
      '/console/favicon.svg': consoleFile('consoleIcon', "The console's icon", 'image/svg+xml'),
      '/v1/runs': {
        post: {
          operationId: 'startRun',
          summary: 'Start a run',
          tags: ['runs'],
          // Either one: the API token, or a signed webhook body (signature and timestamp).
          security: [{ bearer: [] }, { webhookSignature: [], webhookTimestamp: [] }],
          parameters: [idempotencyKey, traceparent],
          requestBody: { required: true, ...json('CreateRun') },
          callbacks: runCallbacks,
          responses: {
            '202': ok('Started', 'CreatedRun'),
            '200': ok('Already started with this Idempotency-Key', 'CreatedRun'),
            ...errorResponses(ROUTE_ERRORS.createRun),
          },
        },
        get: {
          operationId: 'listRuns',
          summary: 'Runs, newest first (from the run index)',
          tags: ['runs'],
          security: bearer,
          parameters: [
            {
              name: 'status',
              in: 'query',
              required: false,
              schema: {
                type: 'string',
                enum: [...RUN_STATUSES],
              },
            },
            {
              name: 'conversation',
              in: 'query',
              required: false,
              description: 'Only the runs of this conversation (the id of its first run).',
              schema: { type: 'string', pattern: RUN_ID_PATTERN.source },
            },
            {
              name: 'agent',
              in: 'query',
              required: false,
              description: 'Only the runs of this agent (runs from before agents: `default`).',
              schema: { type: 'string', pattern: AGENT_NAME_PATTERN.source },
            },
            {
              name: 'parent',
              in: 'query',
              required: false,
              description:
                'Only the child runs this run started by delegating (docs/agents.md#delegation).',
              schema: { type: 'string', pattern: RUN_ID_PATTERN.source },
            },
            limit,
            cursor,
          ],
          responses: {
            '200': ok('A page of runs', 'RunPage'),
            ...errorResponses(ROUTE_ERRORS.listRuns),
          },
        },
      },
      '/v1/runs/stream': {
        get: {
          operationId: 'streamRunList',
          summary: 'Changes of the run list as Server-Sent Events',
          description:
            "Frames `id: <epoch>-<number>`, `event: run | run_deleted | ready`, `data: <RunListEvent JSON>`: `run` each time a run's index row changes (its row as `GET /v1/runs` lists it, with its pending approvals as `GET /v1/approvals` lists them), `run_deleted` when a run is deleted, `ready` once the stream is caught up; a `: heartbeat` comment every 15 s; it does not end by itself. " +
            '`ready` with `relist: true` means the changes since `Last-Event-ID` are not all held (or none was sent): list again. Only the runs the token may see. ' +
            'A reader more than EVENT_STREAM_QUEUE_KB behind gets `event: stream_closed` (no `id`) and the stream closes: reconnect with `Last-Event-ID`. ' +
            'Beyond RUN_LIST_STREAMS streams on the deployment or EVENT_STREAMS_PER_TOKEN of one token the answer is 429 with `Retry-After`.',
          tags: ['runs'],
          security: bearer,
          parameters: [listAfter, listLastEventId],
          responses: {
            '200': {
              description: 'The stream; each `data:` line is one RunListEvent',
              content: {
                'text/event-stream': {
                  schema: {
                    type: 'string',
                    description: 'Server-Sent Events frames; each `data:` is a RunListEvent',
                  },
                  'x-item-schema': ref('RunListEvent'),
                },
              },
            },
            ...errorResponses(ROUTE_ERRORS.streamRunList),
          },
        },
      },
      '/v1/runs/{id}': {
        get: {
          operationId: 'getRun',
          summary: 'Run status, steps so far, usage, pending approvals, deliveries',
          tags: ['runs'],
          security: bearer,
          parameters: [runId],
          responses: { '200': ok('The run', 'RunView'), ...errorResponses(ROUTE_ERRORS.getRun) },
        },
        delete: {
          operationId: 'deleteRun',
          summary: 'Delete the run and every copy of it (scope runs:delete; idempotent)',
          description:
            'An unfinished run is stopped first (a side effect in flight is left with its outcome unknown). From this answer on every read of the run is 404 run_deleted and it is gone from the lists, the approvals inbox and its conversation; its id is never used again.',
          tags: ['runs'],
          security: bearer,
          parameters: [runId],
          responses: {
            '200': ok('Deleted', 'Deleted'),
            '202': ok('Deleting: the slice in flight stops, then the run is wiped', 'Deleted'),
            ...errorResponses(ROUTE_ERRORS.deleteRun),
          },
        },
      },
      '/v1/runs/{id}/export': {
        get: {
          operationId: 'exportRun',
          summary: 'The whole run as one JSON document (state, trace, observations, events)',
          tags: ['runs'],
          security: bearer,
          parameters: [runId],
          responses: {
            '200': ok('The run export', 'RunExport'),
            ...errorResponses(ROUTE_ERRORS.exportRun),
          },
        },
      },
      '/v1/runs/{id}/trace': {
        get: {
          operationId: 'getTrace',
          summary: 'The RunResult trace',
          tags: ['runs'],
          security: bearer,
          parameters: [runId],
          responses: {
            '200': ok('The trace', 'RunResult'),
            ...errorResponses(ROUTE_ERRORS.getTrace),
          },
        },
      },
      '/v1/runs/{id}/events': {
        get: {
          operationId: 'streamEvents',
          summary: 'The run events as Server-Sent Events',
          description:
            'Frames `id: <seq>`, `event: <type>`, `data: <RunEvent JSON>`; a `: heartbeat` comment every 15 s; closes after `run_finished`. While the model writes, live frames without `id:`, `event: answer_delta` or `event: thought_delta` with `data: {"step": <number>, "delta": "<text>"}`, never stored or replayed. ' +
            'A reader more than EVENT_STREAM_QUEUE_KB behind gets a last frame `event: stream_closed` (no `id`; `data` is `{reason: "slow_reader", lastEventId, message}`) and the stream closes: reconnect with `Last-Event-ID` to resume. ' +
            'Beyond EVENT_STREAMS_PER_RUN streams on the run or EVENT_STREAMS_PER_TOKEN of one token the answer is 429 with `Retry-After`.',
          tags: ['runs'],
          security: bearer,
          parameters: [runId, afterSeq, lastEventId],
          responses: {
            '200': {
              description: 'The stream; each `data:` line is one RunEvent',
              content: {
                'text/event-stream': {
                  schema: {
                    type: 'string',
                    description: 'Server-Sent Events frames; each `data:` is a RunEvent',
                  },
                  // What each frame's data holds (OpenAPI 3.2 calls this itemSchema).
                  'x-item-schema': ref('RunEvent'),
                },
              },
            },
            ...errorResponses(ROUTE_ERRORS.streamEvents),
          },
        },
      },
      '/v1/runs/{id}/observations/{handle}': {
        get: {
          operationId: 'readObservation',
          summary: "A truncated call's whole output (what read_observation reads)",
          tags: ['runs'],
          security: bearer,
          parameters: [
            runId,
            {
              name: 'handle',
              in: 'path',
              required: true,
              description: 'The `handle` of a truncated call in the trace.',
              schema: { type: 'string' },
            },
          ],
          responses: {
            '200': ok('The stored observation', 'StoredObservation'),
            ...errorResponses(ROUTE_ERRORS.readObservation),
          },
        },
      },
      '/v1/runs/{id}/approvals': {
        get: {
          operationId: 'getRunApprovals',
          summary: "The run's pending approvals (what `links.approvals` points at)",
          tags: ['approvals'],
          security: bearer,
          parameters: [runId],
          responses: {
            '200': ok("The run's pending approvals", 'RunApprovals'),
            ...errorResponses(ROUTE_ERRORS.getRunApprovals),
          },
        },
      },
      '/v1/runs/{id}/approvals/{callId}': {
        post: {
          operationId: 'decideApproval',
          summary: 'Approve or deny a pending side-effecting call',
          tags: ['approvals'],
          security: bearer,
          parameters: [
            runId,
            { name: 'callId', in: 'path', required: true, schema: { type: 'string' } },
          ],
          requestBody: { required: true, ...json('Decision') },
          responses: {
            '200': ok('Decision recorded', 'DecisionResult'),
            ...errorResponses(ROUTE_ERRORS.decideApproval),
          },
        },
      },
      '/v1/runs/{id}/cancel': {
        post: {
          operationId: 'cancelRun',
          summary: 'Cancel a run at its next transition',
          tags: ['runs'],
          security: bearer,
          parameters: [runId],
          requestBody: { required: false, ...json('Cancel') },
          responses: {
            '202': ok('Cancelling', 'Cancelling'),
            ...errorResponses(ROUTE_ERRORS.cancelRun),
          },
        },
      },
      '/v1/approvals': {
        get: {
          operationId: 'listApprovals',
          summary: 'Pending approvals across runs, newest first',
          tags: ['approvals'],
          security: bearer,
          parameters: [
            {
              name: 'status',
              in: 'query',
              required: false,
              schema: { type: 'string', enum: ['pending'], default: 'pending' },
            },
            limit,
            cursor,
          ],
          responses: {
            '200': ok('A page of pending approvals', 'ApprovalPage'),
            ...errorResponses(ROUTE_ERRORS.listApprovals),
          },
        },
      },
      '/v1/me': {
        get: {
          operationId: 'whoAmI',
          summary:
            "The token's name, scopes and which runs it reaches (any valid token; no scope needed)",
          tags: ['service'],
          security: bearer,
          responses: { '200': ok('The token', 'Me'), ...errorResponses(ROUTE_ERRORS.whoAmI) },
        },
      },
      '/v1/agents': {
        get: {
          operationId: 'listAgents',
          summary: 'The agents runs may name: tools, model, protocol, output schema',
          tags: ['agents'],
          security: bearer,
          responses: {
            '200': ok('The agents', 'AgentList'),
            ...errorResponses(ROUTE_ERRORS.listAgents),
          },
        },
      },
      '/v1/agents/{name}': {
        get: {
          operationId: 'getAgent',
          summary: 'One agent, with its instructions',
          tags: ['agents'],
          security: bearer,
          parameters: [
            {
              name: 'name',
              in: 'path',
              required: true,
              description: "The agent's name.",
              schema: { type: 'string', pattern: AGENT_NAME_PATTERN.source },
            },
          ],
          responses: {
            '200': ok('The agent', 'Agent'),
            ...errorResponses(ROUTE_ERRORS.getAgent),
          },
        },
      },
      '/slack/commands': slackOperation('slackCommand', 'Slack slash command'),
      '/slack/events': slackOperation('slackEvent', 'Slack Events API'),
      '/slack/interactions': slackOperation('slackInteraction', 'Slack interactivity'),
    },
  }
}
