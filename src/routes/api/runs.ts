import type { Context } from 'hono'
import { Hono } from 'hono/tiny'
import type { AppEnv, Principal } from '../app-env'
import { ApiError } from '../api-error'
import { requireAuth } from './auth'
import { parseJsonBody, refuseDeepJson } from '../body'
import { CancelBody, CreateRunBody, DecisionBody, RUN_ID_PATTERN } from './schemas'
import { startRun } from '../start-run'
import { streamEvents } from './events'
import { streamRunList } from './run-list-stream'
import { listRunsHandler } from './run-list'
import { loadConfig } from '../../config'
import { runNotFound } from './run-not-found'
import { ownerFor, reachableRun } from './run-access'
import { parseTraceparent } from '../../runs/otel/otel-ids'
import { withFamily } from './run-family'

/**
 * `/v1/runs`: start, read, trace, export, decide approvals, cancel, delete
 * (docs/architecture.md#layers).
 */
export const runsRoutes = new Hono<AppEnv>()

// Scopes by route (see scopeFor): GET → runs:read, approvals → approvals:write,
// DELETE → runs:delete, else runs:write.
runsRoutes.use('*', requireAuth())

runsRoutes.post('/', async (c) => {
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
    task: body.task,
    requestedBy: c.var.principal,
    owner: ownerFor(c.var.caller),
    ...(body.tools ? { tools: body.tools } : {}),
    ...(body.budget ? { budget: body.budget } : {}),
    ...(body.protocol ? { protocol: body.protocol } : {}),
    ...(body.confirm ? { confirm: body.confirm } : {}),
    ...(body.model ? { model: body.model } : {}),
    ...(body.agent !== undefined ? { agent: body.agent } : {}),
    ...(body.instructions !== undefined ? { instructions: body.instructions } : {}),
    ...(body.output_schema !== undefined ? { outputSchema: body.output_schema } : {}),
    ...(body.callback_url ? { callbackUrl: body.callback_url } : {}),
    ...(body.callback_events ? { callbackEvents: body.callback_events } : {}),
    ...(body.metadata ? { metadata: body.metadata } : {}),
    ...(key ? { idempotencyKey: key } : {}),
    ...(body.continue !== undefined ? { continue: body.continue } : {}),
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

// Before `/:id`: `stream` is not a run id.
runsRoutes.get('/stream', streamRunList)

runsRoutes.get('/:id', async (c) =>
  c.json(await withFamily(c.env, await loadRun(c, c.req.param('id')))),
)

// Deleting: every copy of the run goes; idempotent (docs/operations.md#deletion).
runsRoutes.delete('/:id', async (c) => {
  const id = c.req.param('id')
  const out = await (await reachableRun(c, id)).delete(c.var.principal)
  if (!out.ok) throw new ApiError(404, 'run_not_found', `no run ${id}`)
  return c.json({ id, status: out.status }, out.status === 'deleted' ? 200 : 202)
})

// The whole run as one JSON document, for archives and offline evaluation.
runsRoutes.get('/:id/export', async (c) => {
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

runsRoutes.get('/', listRunsHandler)

runsRoutes.get('/:id/events', streamEvents)

// The whole output of a truncated call, as `read_observation` gives it to the model.
runsRoutes.get('/:id/observations/:handle', async (c) => {
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

runsRoutes.get('/:id/trace', async (c) => c.json((await loadRun(c, c.req.param('id'))).result))

runsRoutes.get('/:id/approvals', async (c) => {
  const view = await withFamily(c.env, await loadRun(c, c.req.param('id')))
  return c.json({
    runId: view.id,
    status: view.status,
    pendingApprovals: view.pendingApprovals,
    descendantApprovals: view.descendantApprovals,
  })
})

runsRoutes.post('/:id/approvals/:callId', async (c) => {
  const id = c.req.param('id')
  const callId = c.req.param('callId')
  const body = parseJsonBody(
    decisionAliases(c.var.rawBody),
    DecisionBody,
    c.req.header('Content-Type') ?? null,
  )
  const stub = await reachableRun(c, id)
  const view = await stub.get()
  if (!view) throw await runNotFound(stub, id)
  // Slack-started runs are decided in Slack by SLACK_APPROVERS, so a token cannot go around
  // the approver list, unless the deployment says tokens may decide them too.
  if (view.requestedBy.startsWith('slack:') && !loadConfig(c.env).security.apiApprovesSlackRuns) {
    throw new ApiError(
      403,
      'slack_run',
      `run ${id} was started from Slack, so its approvals are decided in Slack by SLACK_APPROVERS; ` +
        'set API_APPROVES_SLACK_RUNS=true to let tokens with approvals:write decide them too',
    )
  }
  // The decider is the authenticated token, never a name the caller writes in the body.
  const out = await stub.decide({
    callId,
    decision: body.decision,
    argsHash: body.args_hash,
    by: c.var.principal,
    ...(body.reason ? { reason: body.reason } : {}),
  })
  if (out.ok) return c.json(out)
  const status = out.code === 'no_run' || out.code === 'not_found' ? 404 : 409
  const code =
    out.code === 'no_run' ? 'run_not_found' : out.code === 'not_found' ? 'call_not_found' : out.code
  throw new ApiError(status, code, out.message, {
    ...(out.decidedBy ? { decidedBy: out.decidedBy } : {}),
    ...(out.decision ? { decision: out.decision } : {}),
    ...(out.expiredAt ? { expiredAt: new Date(out.expiredAt).toISOString() } : {}),
  })
})

runsRoutes.post('/:id/cancel', async (c) => {
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
