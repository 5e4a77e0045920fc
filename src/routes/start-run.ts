import { DEFAULT_HISTORY_TOKENS, MIN_HISTORY_TOKENS, type Budget } from '../kernel/budget'
import type { ConfirmPolicy } from '../kernel/confirm'
import { canonicalJson } from '../kernel/canonical'
import { sha256Hex } from '../security/sha256'
import { DEMO_MODEL, loadConfig, overMaxima, type ServiceConfig } from '../config'
import type { Env } from '../env'
import { runStub, type RunView, type StartInput } from '../runs/types'
import { ApiError } from './api-error'
import { continuationOf } from './continue-run'
import { runAgent } from './run-agent'
import { forbiddenAddress, writtenHost } from '../security/private-address'

/** A run as asked for: what the RunStore takes as given, plus what is still to be checked. */
export interface StartRunRequest extends Pick<
  StartInput,
  | 'task'
  | 'model'
  | 'callbackUrl'
  | 'callbackEvents'
  | 'metadata'
  | 'requestedBy'
  | 'owner'
  | 'slack'
  | 'trace'
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
}

/** Validates a run request against the server's configuration and starts it in its own object. */
export async function startRun(
  env: Env,
  req: StartRunRequest,
): Promise<{ created: boolean; view: RunView }> {
  const config = loadConfig(env)
  resolveBudget(config, req.budget)
  const chosen = runAgent(config, {
    ...(req.agent !== undefined ? { agent: req.agent } : {}),
    ...(req.instructions !== undefined ? { instructions: req.instructions } : {}),
    ...(req.outputSchema !== undefined ? { outputSchema: req.outputSchema } : {}),
    ...(req.tools ? { tools: req.tools } : {}),
    ...(req.budget ? { budget: req.budget } : {}),
    ...(req.confirm ? { confirm: req.confirm } : {}),
  })
  const { tools, mcpTools, budget, agent } = chosen
  const model = req.model ?? agent.model ?? undefined
  if (req.model && !config.model.allowlist.includes(req.model)) {
    throw new ApiError(
      400,
      'model_not_allowed',
      `model "${req.model}" is not allowed; choose one of ${config.model.allowlist.join(', ')}`,
    )
  }
  if (req.callbackEvents && !req.callbackUrl) {
    throw new ApiError(400, 'invalid_request', 'callback_events needs a callback_url')
  }
  if (req.callbackUrl) {
    if (!env.WEBHOOK_SECRET) {
      throw new ApiError(
        400,
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
    throw new ApiError(
      400,
      'cost_budget_unavailable',
      'budget.maxCostUsd needs PRICE_PROMPT_PER_1K_USD / PRICE_COMPLETION_PER_1K_USD configured',
    )
  }
  if (req.metadata && JSON.stringify(req.metadata).length > 4096) {
    throw new ApiError(
      400,
      'metadata_too_large',
      'metadata must serialize to at most 4096 characters',
    )
  }
  // The offline demo model speaks only the native protocol.
  const protocol =
    (model ?? config.model.model) === DEMO_MODEL
      ? 'native'
      : (req.protocol ?? agent.protocol ?? config.model.protocol)
  const continued = req.continue
    ? await continuationOf(env, req.continue, historyLimit(budget))
    : undefined
  const conversation = continued?.conversation
  const id = req.idempotencyKey ? await idFromKey(req.idempotencyKey) : newRunId()
  const stub = runStub(env.RUNS, id)
  const out = await stub.start({
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
  })
  if (out.deleted) {
    throw new ApiError(
      409,
      'run_deleted',
      `run ${id} was deleted, and a deleted run's id is never used again; use a new Idempotency-Key`,
      { runId: id },
    )
  }
  if (out.conflict) {
    throw new ApiError(
      409,
      'idempotency_key_reused',
      `Idempotency-Key was already used for run ${id} with a different request; use a new key`,
      { runId: id },
    )
  }
  return out
}

/** What makes two requests "the same" for an idempotency key: everything the caller asked. */
async function requestHash(req: StartRunRequest): Promise<string> {
  // A retry may come from another trace (a new traceparent): it is still the same request.
  const { idempotencyKey: _key, trace: _trace, ...asked } = req
  return sha256Hex(canonicalJson(asked))
}

/** Checks a requested budget against the server maxima (the agent's bounds are run-agent.ts's). */
function resolveBudget(config: ServiceConfig, requested: Partial<Budget> | undefined): Budget {
  const over = overMaxima(config.maxBudget, requested)
  if (over.length) {
    throw new ApiError(
      400,
      'budget_over_maximum',
      `budget above the server maxima: ${over.join(', ')}`,
      { maxima: config.maxBudget },
    )
  }
  return { ...config.defaultBudget, ...requested }
}

/**
 * A callback goes where the caller says, from inside our network: never to loopback, private,
 * link-local or metadata addresses or local names unless CALLBACK_ALLOWLIST lists the host (and
 * port); plain http only for entries written `http://host`. Each refusal names its rule.
 */
function checkCallbackUrl(config: ServiceConfig, value: string): void {
  const url = new URL(value)
  const refuse = (rule: string, message: string): never => {
    throw new ApiError(400, 'invalid_callback_url', message, { rule, host: url.host })
  }
  if (url.username || url.password) {
    refuse('credentials', 'callback_url must not contain credentials')
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    refuse('scheme', `callback_url must be https, not ${url.protocol}`)
  }
  const listed = config.security.callbackHosts
  if (listed?.allows(url)) return
  if (url.protocol === 'http:') {
    refuse(
      'scheme',
      'callback_url must be https (plain http only for hosts listed as "http://host:port" in CALLBACK_ALLOWLIST)',
    )
  }
  if (listed) {
    refuse('allowlist', `callback_url host ${url.host} is not in CALLBACK_ALLOWLIST`)
  }
  const bad = forbiddenAddress(url, writtenHost(value))
  if (bad) {
    refuse(
      bad.rule,
      `callback_url host ${url.host} is refused (rule ${bad.rule}: ${bad.why}); ` +
        'list it in CALLBACK_ALLOWLIST if this server should call it',
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

function newRunId(): string {
  return `run_${crypto.randomUUID().replaceAll('-', '')}`
}

/** The run id an idempotency key gives (the same key always names the same run). */
export async function idFromKey(key: string): Promise<string> {
  return `run_${(await sha256Hex(`edgeloop-run:${key}`)).slice(0, 32)}`
}
