import type { Context } from 'hono'
import { loadConfig } from '../../config'
import type { DecideRequest, DecideResponse } from '../../runs/types'
import type { AppEnv } from '../app-env'
import { ApiError } from '../api-error'
import { reachableRun } from './run-access'
import { runNotFound } from './run-not-found'

/**
 * Decides a pending item of run `id` for the authenticated caller (docs/human-in-the-loop.md):
 * the approvals route and the questions route end here. The decider is the credential's name,
 * never a name from the body; a refusal is a 4xx that says why, the item left as it was.
 */
export async function decideItem(
  c: Context<AppEnv>,
  id: string,
  request: Omit<DecideRequest, 'by'>,
): Promise<Response> {
  const stub = await reachableRun(c, id)
  const view = await stub.get()
  if (!view) throw await runNotFound(stub, id)
  // Slack-started runs are decided in Slack by SLACK_APPROVERS, so a token cannot go around
  // the approver list, unless the deployment says tokens may decide them too.
  if (view.requestedBy.startsWith('slack:') && !loadConfig(c.env).security.apiApprovesSlackRuns) {
    throw new ApiError(
      403,
      'slack_run',
      `run ${id} was started from Slack, so its pending items are decided in Slack by SLACK_APPROVERS; ` +
        'set API_APPROVES_SLACK_RUNS=true to let tokens with approvals:write decide them too',
    )
  }
  const out = await stub.decide({ ...request, by: c.var.principal })
  if (out.ok) return c.json(out)
  throw new ApiError(STATUS[out.code], API_CODE[out.code] ?? out.code, out.message, details(out))
}

type Refusal = Extract<DecideResponse, { ok: false }>

const STATUS: Record<Refusal['code'], 400 | 404 | 409> = {
  no_run: 404,
  not_found: 404,
  invalid_args: 400,
  invalid_answer: 400,
  not_editable: 400,
  hash_mismatch: 409,
  already_decided: 409,
  not_pending: 409,
  run_finished: 409,
  run_cancelling: 409,
  wrong_kind: 409,
  approval_expired: 409,
}

const API_CODE: Partial<Record<Refusal['code'], string>> = {
  no_run: 'run_not_found',
  not_found: 'call_not_found',
}

function details(out: Refusal): Record<string, unknown> | undefined {
  const d = {
    ...(out.decidedBy ? { decidedBy: out.decidedBy } : {}),
    ...(out.decision ? { decision: out.decision } : {}),
    ...(out.kind ? { kind: out.kind } : {}),
    ...(out.expiredAt ? { expiredAt: new Date(out.expiredAt).toISOString() } : {}),
    ...(out.fields ? { fields: out.fields } : {}),
    ...(out.problems ? { problems: out.problems } : {}),
  }
  return Object.keys(d).length ? d : undefined
}
