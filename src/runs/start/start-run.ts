import { DEFAULT_HISTORY_TOKENS, MIN_HISTORY_TOKENS, type Budget } from '../../kernel/budget'
import type { ConfirmPolicy } from '../../kernel/confirm'
import { canonicalJson } from '../../kernel/canonical'
import type { ParentRef } from '../../kernel/state'
import { sha256Hex } from '../../security/sha256'
import { DEMO_MODEL, loadConfig, overMaxima, type Agent, type ServiceConfig } from '../../config'
import type { EnvVars } from '../../env-vars'
import type { RunOwner } from '../run-owner'
import { runStub, type RunView, type SlackCards, type StartInput } from '../types'
import { checkCallbackUrl } from './callback-url'
import { continuationOf } from './continuation'
import { runAgent } from './run-agent'
import { idFromKey, newRunId } from './run-id'
import { StartError } from './start-error'
import { personOf, personServersWithoutPerson } from '../connections/connections'

/** What a start needs of the Worker: the deployment's settings and the runs' objects. */
export type StartEnv<T extends Rpc.DurableObjectBranded | undefined = undefined> = EnvVars & {
  RUNS: DurableObjectNamespace<T>
}

/**
 * Who starts a run: `requestedBy` is recorded with it (`api:<token>`, `webhook`,
 * `slack:<user id>`, …) and `owner` is the token it belongs to (runs/run-owner.ts; null: no
 * token's). Every way in names one.
 */
export interface Requester {
  requestedBy: string
  owner: RunOwner
}

/**
 * A run started by another run's delegated call (runs/child-runs.ts decides these): its id,
 * derived from the parent's run and call, the parent, and its budget, carved out of the
 * parent's. It gets its agent's tools and policy as they are.
 */
export interface Delegation {
  id: string
  parent: ParentRef
  budget: Budget
  slackCards?: SlackCards
}

/** A run as asked for: who asks, the task, and what the asker may choose of the run. */
export interface StartRequest
  extends
    Requester,
    Pick<
      StartInput,
      'task' | 'model' | 'callbackUrl' | 'callbackEvents' | 'metadata' | 'slack' | 'trace'
    > {
  tools?: string[]
  budget?: Partial<Budget>
  protocol?: StartInput['protocol']
  confirm?: ConfirmPolicy
  /** Same key → same run: retried requests (and Slack retries) never start a second run. */
  idempotencyKey?: string
  /** The agent's name; absent: `default`. */
  agent?: string
  /** Ad-hoc instructions, instead of the agent's. */
  instructions?: string
  /** Ad-hoc output JSON Schema, instead of the agent's. */
  outputSchema?: Record<string, unknown>
  /**
   * The id of a finished run this one continues (its conversation's history comes first in the
   * new run's context). The caller has checked that the asker may read that run.
   */
  continue?: string
  delegation?: Delegation
}

/**
 * What an asker chooses of a run: the task and the options a start request may set. The API's
 * start body, once parsed, is exactly this (`CreateRunBody` in routes/api/schemas.ts).
 */
export type RunChoices = Pick<
  StartRequest,
  | 'task'
  | 'tools'
  | 'budget'
  | 'protocol'
  | 'confirm'
  | 'model'
  | 'agent'
  | 'instructions'
  | 'outputSchema'
  | 'callbackUrl'
  | 'callbackEvents'
  | 'metadata'
  | 'continue'
>

/** A started run, or the one the idempotency key already started (`created: false`). */
export interface StartedRun {
  created: boolean
  view: RunView
}

/**
 * Starts a run in its own object: the one way a run begins (an API or webhook request, a
 * `continue`, Slack, a delegated call). Checks the request against the deployment's settings
 * and the agent it names; a refusal is a StartError.
 */
export async function startRun<T extends Rpc.DurableObjectBranded | undefined>(
  env: StartEnv<T>,
  req: StartRequest,
): Promise<StartedRun> {
  const config = loadConfig(env)
  checkMaxima(config, req.budget)
  const chosen = runAgent(config, {
    ...(req.agent !== undefined ? { agent: req.agent } : {}),
    ...(req.instructions !== undefined ? { instructions: req.instructions } : {}),
    ...(req.outputSchema !== undefined ? { outputSchema: req.outputSchema } : {}),
    ...(req.tools ? { tools: req.tools } : {}),
    ...(req.budget ? { budget: req.budget } : {}),
    ...(req.confirm ? { confirm: req.confirm } : {}),
  })
  const { tools, mcpTools, agent } = chosen
  refuseUnownedConnections(config.mcpServers, mcpTools, req)
  const budget = req.delegation?.budget ?? chosen.budget
  checkAsk(env, config, req)
  const model = req.model ?? agent.model ?? undefined
  // The offline demo model speaks only the native protocol.
  const protocol =
    (model ?? config.model.model) === DEMO_MODEL
      ? 'native'
      : (req.protocol ?? agent.protocol ?? config.model.protocol)
  const continued = req.continue
    ? await continuationOf(env.RUNS, req.continue, historyLimit(budget))
    : undefined
  const conversation = continued?.conversation
  const id = await runIdOf(req)
  const out = await runStub(env.RUNS, id).start({
    id,
    task: req.task,
    tools,
    ...(mcpTools.length ? { mcpTools } : {}),
    budget,
    protocol,
    policy: chosen.policy,
    agent: chosen.snapshot,
    requestedBy: req.requestedBy,
    // A follow-up is its conversation's: it keeps the owner of the run it continues.
    owner: continued ? continued.owner : req.owner,
    ...(model ? { model } : {}),
    ...(req.callbackUrl ? { callbackUrl: req.callbackUrl } : {}),
    ...(req.callbackEvents ? { callbackEvents: req.callbackEvents } : {}),
    ...(req.metadata ? { metadata: req.metadata } : {}),
    ...(req.slack ? { slack: req.slack } : {}),
    ...(conversation ? { conversation } : {}),
    ...(req.trace ? { trace: req.trace } : {}),
    ...(req.idempotencyKey ? { requestHash: await requestHash(req) } : {}),
    ...slackCardsOf(config, agent, req),
    ...(req.delegation ? { parent: req.delegation.parent } : {}),
  })
  if (out.deleted) {
    throw new StartError(
      'conflict',
      'run_deleted',
      `run ${id} was deleted, and a deleted run's id is never used again; use a new Idempotency-Key`,
      { runId: id },
    )
  }
  if (out.conflict) {
    throw new StartError(
      'conflict',
      'idempotency_key_reused',
      `Idempotency-Key was already used for run ${id} with a different request; use a new key`,
      { runId: id },
    )
  }
  return out
}

/**
 * Where a run not started from Slack posts its pending items' cards (docs/agents.md#slack): a
 * child, its parent's place; any other run, its agent's `slack.approvals` channel, else
 * SLACK_APPROVALS_CHANNEL. A Slack-started run's cards go in its own thread.
 */
function slackCardsOf(
  config: ServiceConfig,
  agent: Agent,
  req: StartRequest,
): { slackCards?: SlackCards } {
  if (req.slack) return {}
  if (req.delegation?.slackCards) return { slackCards: req.delegation.slackCards }
  const channel = agent.slackApprovals ?? config.slack.approvalsChannel
  return channel ? { slackCards: { channel } } : {}
}

/** The run's id: its parent's choice, its key's, or a new one. */
async function runIdOf(req: StartRequest): Promise<string> {
  if (req.delegation) return req.delegation.id
  return req.idempotencyKey ? idFromKey(req.idempotencyKey) : newRunId()
}

/** What the asker chose beyond the agent: the model, the callback, a cost budget, metadata. */
function checkAsk(env: EnvVars, config: ServiceConfig, req: StartRequest): void {
  if (req.model && !config.model.allowlist.includes(req.model)) {
    throw new StartError(
      'invalid',
      'model_not_allowed',
      `model "${req.model}" is not allowed; choose one of ${config.model.allowlist.join(', ')}`,
    )
  }
  if (req.callbackEvents && !req.callbackUrl) {
    throw new StartError('invalid', 'invalid_request', 'callback_events needs a callback_url')
  }
  if (req.callbackUrl) {
    if (!env.WEBHOOK_SECRET) {
      throw new StartError(
        'invalid',
        'callback_unsigned',
        'callback_url needs WEBHOOK_SECRET configured on the server, so deliveries can be signed',
      )
    }
    checkCallbackUrl(config, req.callbackUrl)
  }
  const priced =
    config.model.pricePromptPer1kUsd !== undefined ||
    config.model.priceCompletionPer1kUsd !== undefined
  if (req.budget?.maxCostUsd !== undefined && !priced) {
    throw new StartError(
      'invalid',
      'cost_budget_unavailable',
      'budget.maxCostUsd needs PRICE_PROMPT_PER_1K_USD / PRICE_COMPLETION_PER_1K_USD configured',
    )
  }
  if (req.metadata && JSON.stringify(req.metadata).length > 4096) {
    throw new StartError(
      'invalid',
      'metadata_too_large',
      'metadata must serialize to at most 4096 characters',
    )
  }
}

/** What makes two requests "the same" for an idempotency key: everything the caller asked. */
async function requestHash(req: StartRequest): Promise<string> {
  // A retry may come from another trace (a new traceparent): it is still the same request.
  const { idempotencyKey: _key, trace: _trace, ...asked } = req
  return sha256Hex(canonicalJson(asked))
}

/** Checks a requested budget against the server maxima (the agent's bounds are run-agent.ts's). */
function checkMaxima(config: ServiceConfig, requested: Partial<Budget> | undefined): void {
  const over = overMaxima(config.maxBudget, requested)
  if (over.length) {
    throw new StartError(
      'invalid',
      'budget_over_maximum',
      `budget above the server maxima: ${over.join(', ')}`,
      { maxima: config.maxBudget },
    )
  }
}

/**
 * The history's share of a request: `maxHistoryTokens`, and at most half of `maxContextTokens`
 * (the history is never elided, so it must leave the trajectory room under the cap).
 */
function historyLimit(budget: Budget): number {
  const limit = budget.maxHistoryTokens ?? DEFAULT_HISTORY_TOKENS
  const context = budget.maxContextTokens
  return context === undefined ? limit : Math.max(MIN_HISTORY_TOKENS, Math.min(limit, context / 2))
}

/**
 * A run that may use a per-person MCP server needs a person behind it to grant the connection: a
 * webhook's run could only wait for a grant nobody may give, so it is refused at once.
 */
function refuseUnownedConnections(
  servers: ServiceConfig['mcpServers'],
  mcpTools: readonly string[],
  req: StartRequest,
): void {
  const person = personOf({ owner: req.owner, requestedBy: req.requestedBy })
  const unowned = personServersWithoutPerson(servers, mcpTools, person)
  if (!unowned.length) return
  throw new StartError(
    'invalid',
    'needs_person',
    `the MCP server${unowned.length > 1 ? 's' : ''} ${unowned.join(', ')} connect per person (owner "person"), and no person is behind this run (${req.requestedBy}); start it with an API token or from Slack, or leave out ${unowned.map((s) => `${s}__*`).join(', ')}`,
    { servers: unowned },
  )
}
