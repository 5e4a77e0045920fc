import { Hono } from 'hono/tiny'
import type { Context } from 'hono'
import type { AppEnv, Principal } from '../app-env'
import { ApiError } from '../api-error'
import { requireAuth } from './auth'
import { parseJsonBody, refuseDeepJson } from '../body'
import { AnswerBody, CancelBody, CreateRunBody, DecisionBody, RUN_ID_PATTERN } from './schemas'
import { decideItem } from './decide-item'
import { startRun } from '../../runs/start'
import { streamEvents } from './events'
import { streamRunList } from './run-list-stream'
import { listRunsHandler } from './run-list'
import { runNotFound } from './run-not-found'
import { ownerFor, reachableRun } from './run-access'
import { parseTraceparent } from '../../runs/otel/otel-ids'
import { withFamily } from './run-family'
import { AGENT_NAME_PATTERN } from '../../config'
import { RUN_STATUSES } from '../../api/enums'
import { runCallbacks } from '../openapi/openapi-callbacks'
import { declareRoute, DeclaredRoutes } from '../openapi/serve-route'
import { errorResponses, ROUTE_ERRORS } from '../openapi/openapi-errors'
import {
  afterSeq,
  bearer,
  callIdParam,
  cursor,
  idempotencyKey as idempotencyKeyHeader,
  json,
  lastEventId,
  limit,
  listAfter,
  listLastEventId,
  ok,
  runId,
  sseResponse,
  traceparent,
} from '../openapi/openapi-parts'

/**
 * `/v1/runs`: start, read, trace, export, decide approvals, cancel, delete
 * (docs/architecture.md#layers). Each route is declared once, with what /openapi.json says of it
 * (docs/decisions.md#the-openapi-document).
 */
export const runsRoutes = new Hono<AppEnv>()

/** What /openapi.json says of each route here. */
export const runsDocs = new DeclaredRoutes('/v1/runs')

// Scopes by route (see scopeFor): GET → runs:read, approvals → approvals:write,
// DELETE → runs:delete, else runs:write.
runsRoutes.use('*', requireAuth())

const startRunRoute = declareRoute({
  method: 'post',
  path: '/',
  operationId: 'startRun',
  summary: 'Start a run',
  tags: ['runs'],
  // Either one: the API token, or a signed webhook body (signature and timestamp).
  security: [{ bearer: [] }, { webhookSignature: [], webhookTimestamp: [] }],
  parameters: [idempotencyKeyHeader, traceparent],
  requestBody: { required: true, ...json('CreateRun') },
  callbacks: runCallbacks,
  responses: {
    '202': ok('Started', 'CreatedRun'),
    '200': ok('Already started with this Idempotency-Key', 'CreatedRun'),
    ...errorResponses(ROUTE_ERRORS.createRun),
  },
})

runsDocs.serve(runsRoutes, startRunRoute, async (c) => {
  const body = parseJsonBody(c.var.rawBody, CreateRunBody, c.req.header('Content-Type') ?? null)
  const key = idempotencyKey(c.var.caller, c.req.header('Idempotency-Key'))
  // Continuing a run puts its history into the new run: only a caller who may read it.
  if (body.continue !== undefined) {
    requireReader(c.var.caller)
    // A token limited to its own runs continues only those (another's is "not found").
    if (RUN_ID_PATTERN.test(body.continue)) await reachableRun(c, body.continue)
  }
  // The caller's trace, which the run's spans join (an invalid one is ignored, as W3C says).
  const trace = parseTraceparent(c.req.header('traceparent'))
  const { created, view } = await startRun(c.env, {
    ...body,
    requestedBy: c.var.principal,
    owner: ownerFor(c.var.caller),
    ...(key ? { idempotencyKey: key } : {}),
    ...(trace ? { trace } : {}),
  })
  const self = `/v1/runs/${view.id}`
  const { id, position, previousRunId } = view.conversation
  return c.json(
    {
      id: view.id,
      status: view.status,
      created,
      conversation: { id, position, previousRunId },
      links: {
        self,
        trace: `${self}/trace`,
        cancel: `${self}/cancel`,
        approvals: `${self}/approvals`,
      },
    },
    created ? 202 : 200,
  )
})

const listRunsRoute = declareRoute({
  method: 'get',
  path: '/',
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
})

runsDocs.serve(runsRoutes, listRunsRoute, listRunsHandler)

const streamRunListRoute = declareRoute({
  method: 'get',
  path: '/stream',
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
    '200': sseResponse(
      'The stream; each `data:` line is one RunListEvent',
      'Server-Sent Events frames; each `data:` is a RunListEvent',
      'RunListEvent',
    ),
    ...errorResponses(ROUTE_ERRORS.streamRunList),
  },
})

// Before `/:id`: `stream` is not a run id.
runsDocs.serve(runsRoutes, streamRunListRoute, streamRunList)

const getRunRoute = declareRoute({
  method: 'get',
  path: '/{id}',
  operationId: 'getRun',
  summary: 'Run status, steps so far, usage, pending approvals, deliveries',
  tags: ['runs'],
  security: bearer,
  parameters: [runId],
  responses: { '200': ok('The run', 'RunView'), ...errorResponses(ROUTE_ERRORS.getRun) },
})

runsDocs.serve(runsRoutes, getRunRoute, async (c) =>
  c.json(await withFamily(c.env, await loadRun(c, c.req.param('id')))),
)

const deleteRunRoute = declareRoute({
  method: 'delete',
  path: '/{id}',
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
})

// Deleting: every copy of the run goes; idempotent (docs/operations.md#deletion).
runsDocs.serve(runsRoutes, deleteRunRoute, async (c) => {
  const id = c.req.param('id')
  const out = await (await reachableRun(c, id)).delete(c.var.principal)
  if (!out.ok) throw new ApiError(404, 'run_not_found', `no run ${id}`)
  return c.json({ id, status: out.status }, out.status === 'deleted' ? 200 : 202)
})

const exportRunRoute = declareRoute({
  method: 'get',
  path: '/{id}/export',
  operationId: 'exportRun',
  summary: 'The whole run as one JSON document (state, trace, observations, events)',
  tags: ['runs'],
  security: bearer,
  parameters: [runId],
  responses: {
    '200': ok('The run export', 'RunExport'),
    ...errorResponses(ROUTE_ERRORS.exportRun),
  },
})

// The whole run as one JSON document, for archives and offline evaluation.
runsDocs.serve(runsRoutes, exportRunRoute, async (c) => {
  const id = c.req.param('id')
  const stub = await reachableRun(c, id)
  const stream = await stub.export()
  if (!stream) throw await runNotFound(stub, id)
  return new Response(stream, {
    headers: {
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Disposition': `attachment; filename="${id}.json"`,
    },
  })
})

const getTraceRoute = declareRoute({
  method: 'get',
  path: '/{id}/trace',
  operationId: 'getTrace',
  summary: 'The RunResult trace',
  tags: ['runs'],
  security: bearer,
  parameters: [runId],
  responses: {
    '200': ok('The trace', 'RunResult'),
    ...errorResponses(ROUTE_ERRORS.getTrace),
  },
})

runsDocs.serve(runsRoutes, getTraceRoute, async (c) =>
  c.json((await loadRun(c, c.req.param('id'))).result),
)

const streamEventsRoute = declareRoute({
  method: 'get',
  path: '/{id}/events',
  operationId: 'streamEvents',
  summary: 'The run events as Server-Sent Events',
  description:
    'Frames `id: <seq>`, `event: <type>`, `data: <RunEvent JSON>`; a `: heartbeat` comment every 15 s; closes after `run_finished`. While the model writes, live frames without `id:`, `event: answer_delta` or `event: thought_delta` with `data: {"step": <number>, "attempt": <number>, "delta": "<text>"}`, never stored or replayed; `attempt` names the model call of the step (one more for each call whose answer a crash lost): drop text of a lower attempt, and a step\'s live text once its `model_replied` or `run_finished` arrives or the connection is opened again (docs/streaming.md). ' +
    'A reader more than EVENT_STREAM_QUEUE_KB behind gets a last frame `event: stream_closed` (no `id`; `data` is `{reason: "slow_reader", lastEventId, message}`) and the stream closes: reconnect with `Last-Event-ID` to resume. ' +
    'Beyond EVENT_STREAMS_PER_RUN streams on the run or EVENT_STREAMS_PER_TOKEN of one token the answer is 429 with `Retry-After`.',
  tags: ['runs'],
  security: bearer,
  parameters: [runId, afterSeq, lastEventId],
  responses: {
    '200': sseResponse(
      'The stream; each `data:` line is one RunEvent',
      'Server-Sent Events frames; each `data:` is a RunEvent',
      'RunEvent',
    ),
    ...errorResponses(ROUTE_ERRORS.streamEvents),
  },
})

runsDocs.serve(runsRoutes, streamEventsRoute, streamEvents)

const readObservationRoute = declareRoute({
  method: 'get',
  path: '/{id}/observations/{handle}',
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
})

// The whole output of a truncated call, as `read_observation` gives it to the model.
runsDocs.serve(runsRoutes, readObservationRoute, async (c) => {
  const id = c.req.param('id')
  const handle = c.req.param('handle')
  const stub = await reachableRun(c, id)
  const stored = await stub.observation(handle)
  if (!stored) throw await runNotFound(stub, id)
  if (stored.text === null) {
    throw new ApiError(
      404,
      'observation_not_found',
      `run ${id} stored no observation ${handle.slice(0, 100)}; use a call's "handle" from its trace`,
    )
  }
  return c.json({ handle, text: stored.text })
})

const getRunApprovalsRoute = declareRoute({
  method: 'get',
  path: '/{id}/approvals',
  operationId: 'getRunApprovals',
  summary: "The run's pending approvals (what `links.approvals` points at)",
  tags: ['approvals'],
  security: bearer,
  parameters: [runId],
  responses: {
    '200': ok("The run's pending approvals", 'RunApprovals'),
    ...errorResponses(ROUTE_ERRORS.getRunApprovals),
  },
})

runsDocs.serve(runsRoutes, getRunApprovalsRoute, async (c) => {
  const view = await withFamily(c.env, await loadRun(c, c.req.param('id')))
  return c.json({
    runId: view.id,
    status: view.status,
    pendingApprovals: view.pendingApprovals,
    descendantApprovals: view.descendantApprovals,
  })
})

const decideApprovalRoute = declareRoute({
  method: 'post',
  path: '/{id}/approvals/{callId}',
  operationId: 'decideApproval',
  summary: 'Approve (as asked, or with edited `args`) or deny a pending side-effecting call',
  description:
    "With `args` the call runs with those arguments instead: checked strictly against the tool's schema (a failure is 400 invalid_args naming the fields, the approval still pending), hashed again, recorded beside the original with the decider; a tool with `editable: false` refuses them (400 not_editable). A pending item of another kind is 409 wrong_kind.",
  tags: ['approvals'],
  security: bearer,
  parameters: [runId, callIdParam],
  requestBody: { required: true, ...json('Decision') },
  responses: {
    '200': ok('Decision recorded', 'DecisionResult'),
    ...errorResponses(ROUTE_ERRORS.decideApproval),
  },
})

runsDocs.serve(runsRoutes, decideApprovalRoute, async (c) => {
  const body = parseJsonBody(
    decisionAliases(c.var.rawBody),
    DecisionBody,
    c.req.header('Content-Type') ?? null,
  )
  if (body.args && body.decision !== 'approve') {
    throw new ApiError(400, 'invalid_request', 'args may only come with "decision": "approve"')
  }
  return decideItem(c, c.req.param('id'), {
    callId: c.req.param('callId'),
    kind: 'approval',
    decision: body.decision,
    argsHash: body.args_hash,
    ...(body.reason ? { reason: body.reason } : {}),
    ...(body.args ? { args: body.args } : {}),
  })
})

const answerQuestionRoute = declareRoute({
  method: 'post',
  path: '/{id}/questions/{callId}',
  operationId: 'answerQuestion',
  summary: 'Answer or decline a question the run asks a person',
  description:
    "The answer is checked against the question's choices or JSON Schema (400 invalid_answer, the question still pending); the first answer wins. `question_hash` is the item's `argsHash`.",
  tags: ['approvals'],
  security: bearer,
  parameters: [runId, callIdParam],
  requestBody: { required: true, ...json('Answer') },
  responses: {
    '200': ok('Answer recorded', 'DecisionResult'),
    ...errorResponses(ROUTE_ERRORS.answerQuestion),
  },
})

runsDocs.serve(runsRoutes, answerQuestionRoute, async (c) => {
  const body = parseJsonBody(
    decisionAliases(c.var.rawBody),
    AnswerBody,
    c.req.header('Content-Type') ?? null,
  )
  const declined = 'decline' in body
  return decideItem(c, c.req.param('id'), {
    callId: c.req.param('callId'),
    kind: 'question',
    decision: declined ? 'deny' : 'approve',
    argsHash: body.question_hash,
    ...(declined ? (body.reason ? { reason: body.reason } : {}) : { answer: body.answer }),
  })
})

const cancelRunRoute = declareRoute({
  method: 'post',
  path: '/{id}/cancel',
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
})

runsDocs.serve(runsRoutes, cancelRunRoute, async (c) => {
  const id = c.req.param('id')
  const body = parseJsonBody(
    decisionAliases(c.var.rawBody),
    CancelBody,
    c.req.header('Content-Type') ?? null,
    { emptyAs: {} },
  )
  const stub = await reachableRun(c, id)
  const out = await stub.cancel(c.var.principal, body.reason)
  if (out.ok) return c.json({ id, status: 'cancelling', message: out.message }, 202)
  if (out.code === 'no_run') throw await runNotFound(stub, id)
  throw new ApiError(409, out.code ?? 'conflict', out.message)
})

/**
 * Before validation: `by` (once free text recorded as the decider, which let a caller pose as a
 * Slack approver) is refused, not ignored, so a client relying on it learns it no longer counts;
 * `argsHash` is read as `args_hash`. Anything that is not a JSON object is left to the schema.
 */
function decisionAliases(raw: string): string {
  let value: unknown
  refuseDeepJson(raw)
  try {
    value = JSON.parse(raw)
  } catch {
    return raw
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) return raw
  const { by, argsHash, ...rest } = value as Record<string, unknown>
  if (by !== undefined) {
    throw new ApiError(
      400,
      'by_not_accepted',
      'the "by" field is not accepted: the decider is recorded as the name of the token you authenticate with (API_TOKENS)',
    )
  }
  if (argsHash === undefined) return raw
  if (rest.args_hash !== undefined && rest.args_hash !== argsHash) {
    throw new ApiError(400, 'invalid_request', 'args_hash and argsHash differ; send one of them')
  }
  return JSON.stringify({ ...rest, args_hash: argsHash })
}

/**
 * A signed webhook's signature is its idempotency key: a captured request replayed, with or
 * without an `Idempotency-Key` header of its own, returns the run it started and never starts
 * another. A token's keys are its own: another caller's same key names another run.
 */
function idempotencyKey(caller: Principal, header: string | undefined): string | undefined {
  if (caller.kind === 'webhook') return `webhook:${caller.signature}`
  if (header === undefined) return undefined
  if (header.length < 1 || header.length > 200) {
    throw new ApiError(
      400,
      'invalid_idempotency_key',
      'Idempotency-Key must be 1 to 200 characters',
    )
  }
  return `token:${caller.name}:${header}`
}

function requireReader(caller: Principal): void {
  if (caller.scopes.includes('runs:read')) return
  throw new ApiError(
    403,
    'forbidden',
    caller.kind === 'webhook'
      ? 'a webhook signature cannot continue a run: the earlier run is readable only with a token (runs:read)'
      : `token "${caller.name}" lacks the scope runs:read, which continuing a run needs (the new run reads the earlier one)`,
    { required: 'runs:read', scopes: caller.scopes },
  )
}

async function loadRun(c: Context<AppEnv>, id: string) {
  const stub = await reachableRun(c, id)
  const view = await stub.get()
  if (!view) throw await runNotFound(stub, id)
  return view
}
