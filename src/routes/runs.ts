import { Hono } from 'hono/tiny'
import type { AppEnv } from './app-env'
import { ApiError } from './api-error'
import { SIGNATURE_HEADER } from '../security/hmac'
import { requireAuth } from './auth'
import { parseJsonBody } from './body'
import { CancelBody, CreateRunBody, DecisionBody, RUN_ID_PATTERN } from './schemas'
import { startRun } from './start-run'
import { streamEvents } from './events'
import { runStub } from '../runs/types'

/** `/v1/runs`: start, read, trace, decide approvals, cancel (docs/architecture.md#layers). */
export const runsRoutes = new Hono<AppEnv>()

runsRoutes.use('*', requireAuth())

// A webhook signature proves who sent a body, not who may decide: signed webhooks may start
// runs, and only the API token may read, approve or cancel them.
runsRoutes.use('*', async (c, next) => {
  const startsRun = c.req.method === 'POST' && /^\/v1\/runs\/?$/.test(c.req.path)
  if (c.var.principal === 'webhook' && !startsRun) {
    throw new ApiError(
      403,
      'forbidden',
      'a webhook signature may only start runs (POST /v1/runs); use Authorization: Bearer <API_TOKEN>',
    )
  }
  await next()
})

runsRoutes.post('/', async (c) => {
  const body = parseJsonBody(c.var.rawBody, CreateRunBody, c.req.header('Content-Type') ?? null)
  // A replayed signed webhook (same signature, inside the replay window) returns the same run.
  const key =
    c.req.header('Idempotency-Key') ??
    (c.var.principal === 'webhook' ? `webhook:${c.req.header(SIGNATURE_HEADER)}` : undefined)
  if (key !== undefined && (key.length < 1 || key.length > 200)) {
    throw new ApiError(
      400,
      'invalid_idempotency_key',
      'Idempotency-Key must be 1 to 200 characters',
    )
  }
  const { created, view } = await startRun(c.env, {
    task: body.task,
    requestedBy: c.var.principal,
    ...(body.tools ? { tools: body.tools } : {}),
    ...(body.budget ? { budget: body.budget } : {}),
    ...(body.protocol ? { protocol: body.protocol } : {}),
    ...(body.confirm ? { confirm: body.confirm } : {}),
    ...(body.model ? { model: body.model } : {}),
    ...(body.callback_url ? { callbackUrl: body.callback_url } : {}),
    ...(body.callback_events ? { callbackEvents: body.callback_events } : {}),
    ...(body.metadata ? { metadata: body.metadata } : {}),
    ...(key ? { idempotencyKey: key } : {}),
  })
  const self = `/v1/runs/${view.id}`
  return c.json(
    {
      id: view.id,
      status: view.status,
      created,
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

runsRoutes.get('/:id', async (c) => c.json(await loadRun(c.env, c.req.param('id'))))

runsRoutes.get('/:id/events', streamEvents)

runsRoutes.get('/:id/trace', async (c) => c.json((await loadRun(c.env, c.req.param('id'))).result))

runsRoutes.post('/:id/approvals/:callId', async (c) => {
  const id = c.req.param('id')
  const callId = c.req.param('callId')
  const body = parseJsonBody(c.var.rawBody, DecisionBody, c.req.header('Content-Type') ?? null)
  const stub = stubFor(c.env, id)
  const out = await stub.decide({
    callId,
    decision: body.decision,
    argsHash: body.args_hash,
    by: `${c.var.principal}:${body.by ?? 'anonymous'}`,
    ...(body.reason ? { reason: body.reason } : {}),
  })
  if (out.ok) return c.json(out)
  const status = out.code === 'no_run' || out.code === 'not_found' ? 404 : 409
  const code =
    out.code === 'no_run' ? 'run_not_found' : out.code === 'not_found' ? 'call_not_found' : out.code
  throw new ApiError(status, code, out.message, {
    ...(out.decidedBy ? { decidedBy: out.decidedBy } : {}),
    ...(out.decision ? { decision: out.decision } : {}),
  })
})

runsRoutes.post('/:id/cancel', async (c) => {
  const id = c.req.param('id')
  const body = parseJsonBody(c.var.rawBody, CancelBody, c.req.header('Content-Type') ?? null, {
    emptyAs: {},
  })
  const out = await stubFor(c.env, id).cancel(
    `${c.var.principal}:${body.by ?? 'anonymous'}`,
    body.reason,
  )
  if (out.ok) return c.json({ id, status: 'cancelling', message: out.message }, 202)
  if (out.code === 'no_run') throw new ApiError(404, 'run_not_found', `no run ${id}`)
  throw new ApiError(409, out.code ?? 'conflict', out.message)
})

function stubFor(env: AppEnv['Bindings'], id: string) {
  if (!RUN_ID_PATTERN.test(id))
    throw new ApiError(404, 'run_not_found', `no run ${id.slice(0, 100)}`)
  return runStub(env.RUNS, id)
}

async function loadRun(env: AppEnv['Bindings'], id: string) {
  const view = await stubFor(env, id).get()
  if (!view) throw new ApiError(404, 'run_not_found', `no run ${id}`)
  return view
}
