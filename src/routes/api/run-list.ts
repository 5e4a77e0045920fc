import type { Context } from 'hono'
import { Hono } from 'hono/tiny'
import {
  InvalidCursorError,
  listPendingApprovals,
  listRuns,
  type Page,
} from '../../runs/index/run-index'
import { RUN_STATUSES, type RunStatus } from '../../api/enums'
import type { AppEnv, Principal } from '../app-env'
import { onlyOwnedBy } from './run-access'
import { ApiError } from '../api-error'
import { requireAuth } from './auth'
import { RUN_ID_PATTERN } from './schemas'
import { AGENT_NAME_PATTERN } from '../../config'
import { declareRoute, DeclaredRoutes } from '../openapi/serve-route'
import { errorResponses, ROUTE_ERRORS } from '../openapi/openapi-errors'
import { bearer, cursor, limit, ok } from '../openapi/openapi-parts'

export const DEFAULT_PAGE = 20
export const MAX_PAGE = 100

/** `GET /v1/runs?status=&conversation=&agent=&parent=&limit=&cursor=`: runs newest first, from the run index (docs/architecture.md#events). */
export async function listRunsHandler(c: Context<AppEnv>): Promise<Response> {
  const status = c.req.query('status')
  if (status !== undefined && !(RUN_STATUSES as readonly string[]).includes(status)) {
    throw new ApiError(
      400,
      'invalid_query',
      `status must be one of ${RUN_STATUSES.join(', ')}, got "${status.slice(0, 40)}"`,
    )
  }
  const conversation = c.req.query('conversation')
  if (conversation !== undefined && !RUN_ID_PATTERN.test(conversation)) {
    throw new ApiError(
      400,
      'invalid_query',
      `conversation must be a run id (the conversation's first run), got "${conversation.slice(0, 40)}"`,
    )
  }
  const parent = c.req.query('parent')
  if (parent !== undefined && !RUN_ID_PATTERN.test(parent)) {
    throw new ApiError(
      400,
      'invalid_query',
      `parent must be a run id (the run whose child runs to list), got "${parent.slice(0, 40)}"`,
    )
  }
  const agent = c.req.query('agent')
  if (agent !== undefined && !AGENT_NAME_PATTERN.test(agent)) {
    throw new ApiError(
      400,
      'invalid_query',
      `agent must be an agent's name (${AGENT_NAME_PATTERN}), got "${agent.slice(0, 40)}"`,
    )
  }
  const limit = pageSize(c.req.query('limit'))
  const cursor = c.req.query('cursor')
  return c.json(
    await page(() =>
      listRuns(c.env.RUN_INDEX, {
        limit,
        ...ownedBy(c.var.caller),
        ...(agent ? { agent } : {}),
        ...(status ? { status: status as RunStatus } : {}),
        ...(conversation ? { conversation } : {}),
        ...(parent ? { parent } : {}),
        ...(cursor ? { cursor } : {}),
      }),
    ),
  )
}

/** What /openapi.json says of the inbox under its first name, `/v1/approvals`. */
export const approvalsDocs = new DeclaredRoutes('/v1/approvals')
export const approvalsRoutes = inboxGroup(approvalsDocs, 'listApprovals')
/** Every kind of pending item, not only approvals: the same list under the name it has now. */
export const inboxDocs = new DeclaredRoutes('/v1/inbox')
export const inboxRoutes = inboxGroup(inboxDocs, 'listInbox')

/**
 * The inbox: every kind of pending item (approvals, questions, connections) across runs, newest
 * first (docs/human-in-the-loop.md#the-inbox), served for `docs` (one list under two names).
 */
function inboxGroup(docs: DeclaredRoutes, operationId: 'listApprovals' | 'listInbox') {
  const routes = new Hono<AppEnv>()
  routes.use('*', requireAuth())
  routes.use('*', async (c, next) => {
    if (c.var.principal === 'webhook') {
      throw new ApiError(
        403,
        'forbidden',
        'a webhook signature may only start runs (POST /v1/runs); use Authorization: Bearer <API_TOKEN>',
      )
    }
    await next()
  })
  docs.serve(routes, inboxRoute(operationId), listInbox)
  return routes
}

/** What /openapi.json says of the inbox under each of its names. */
function inboxRoute(operationId: 'listApprovals' | 'listInbox') {
  return declareRoute({
    method: 'get',
    path: '/',
    operationId,
    summary:
      operationId === 'listInbox'
        ? 'Every pending item (approvals, questions, connections) across runs, newest first'
        : 'Pending items across runs, newest first (the inbox under its first name)',
    description:
      'Each item names its `kind`, what it asks (`ask`), its `actions` and the `href` they are posted to; approvals that may be edited carry their `editSchema`. Expired items are left out.',
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
      '200': ok('A page of pending items', 'ApprovalPage'),
      ...errorResponses(ROUTE_ERRORS.listApprovals),
    },
  })
}

/** `GET /v1/inbox?status=pending&limit=&cursor=`: the page of pending items the token may see. */
async function listInbox(c: Context<AppEnv>): Promise<Response> {
  const status = c.req.query('status') ?? 'pending'
  if (status !== 'pending') {
    throw new ApiError(
      400,
      'invalid_query',
      `status must be "pending" (decided approvals are in each run's trace), got "${status.slice(0, 40)}"`,
    )
  }
  const limit = pageSize(c.req.query('limit'))
  const cursor = c.req.query('cursor')
  return c.json(
    await page(() =>
      listPendingApprovals(c.env.RUN_INDEX, {
        now: Date.now(),
        limit,
        ...ownedBy(c.var.caller),
        ...(cursor ? { cursor } : {}),
      }),
    ),
  )
}

/** A token limited to its own runs lists only those (filtered in the query, so pages stay full). */
function ownedBy(caller: Principal): { owner?: string } {
  const owner = onlyOwnedBy(caller)
  return owner === undefined ? {} : { owner }
}

function pageSize(value: string | undefined): number {
  if (value === undefined) return DEFAULT_PAGE
  const n = Number(value)
  if (!/^\d+$/.test(value) || n < 1 || n > MAX_PAGE) {
    throw new ApiError(
      400,
      'invalid_query',
      `limit must be an integer from 1 to ${MAX_PAGE}, got "${value.slice(0, 40)}"`,
    )
  }
  return n
}

async function page<T>(read: () => Promise<Page<T>>): Promise<Page<T>> {
  try {
    return await read()
  } catch (err) {
    if (err instanceof InvalidCursorError) throw new ApiError(400, 'invalid_cursor', err.message)
    throw err
  }
}
