import { DurableObject } from 'cloudflare:workers'
import {
  decideApproval,
  nextApprovalExpiry,
  pendingApprovals,
  type Decision,
} from '../kernel/approvals'
import { runSlice } from '../kernel/machine'
import { ToolRegistry } from '../kernel/registry'
import { followUpSource } from '../kernel/conversation'
import { createRunState, type RunState } from '../kernel/state'
import { happened, type Deps, type TransitionEvent } from '../kernel/transition'
import { createModel } from '../llm/create-model'
import { ConfigError, loadConfig, type ServiceConfig } from '../config'
import { narrowPolicy } from '../kernel/confirm'
import type { EnvVars } from '../env-vars'
import { redact, registerSecrets } from '../security/redact'
import { deliver } from './deliver'
import { EventLog } from './event-log'
import { EventHub } from './event-stream'
import { eventsBetween } from './events'
import { conversationObservations, observationForConversation } from './conversation-observations'
import { changesIndex } from './run-index-entry'
import { logTransition, logEvent } from './log'
import { runMcpTools, withRunMcpTools } from './mcp-tools'
import { Outbox, type OutboxEntry } from './outbox'
import { PROGRESS_ID, ProgressPump, queueProgress, requeueStaleProgress } from './slack-progress'
import { SLACK_THREAD_ID, type SlackThread } from './slack-thread'
import { RunStorage } from './storage'
import type { DecideResponse, FollowUpAnswer, RunInfo, RunView, StartInput } from './types'
import { statusOf, toRunView } from './view'

/** How long a run waits before looking at a bad configuration again. */
const CONFIG_RETRY_MS = 5 * 60_000

/**
 * One Durable Object per run (docs/architecture.md#layers, #step-machine). HTTP-facing methods only record intent and arm the
 * alarm; the run advances in `alarm()`, one slice per invocation, persisting after every
 * transition, so eviction, redeploys and alarm retries resume at the right sub-step.
 */
/** What the run's object is given: the settings and the run index it writes (docs/architecture.md#events). */
type RunStoreEnv = EnvVars & {
  RUN_INDEX?: D1Database
  RUNS?: DurableObjectNamespace
  SLACK_THREADS?: DurableObjectNamespace<SlackThread>
}

export class RunStore extends DurableObject<RunStoreEnv> {
  readonly #storage: RunStorage
  readonly #outbox: Outbox
  readonly #events: EventLog
  readonly #hub: EventHub
  readonly #progress: ProgressPump
  #state: RunState | undefined
  #info: RunInfo | undefined
  #running = false
  #abort: AbortController | undefined
  /** A side effect was persisted as started and has no result yet (a cancel must wait). */
  #sideEffectInFlight = false
  /** A cancel that arrived while a side effect was in flight: applied once it is recorded. */
  #deferredCancel: string | undefined
  #deps: Deps | undefined
  /** Set while a configuration error keeps the run from advancing: when to look again. */
  #notBefore: number | undefined

  constructor(ctx: DurableObjectState, env: RunStoreEnv) {
    super(ctx, env)
    registerSecrets(env)
    this.#storage = new RunStorage(ctx.storage.sql)
    this.#outbox = new Outbox(ctx.storage.sql)
    this.#events = new EventLog(ctx.storage.sql, () => this.#state!.id)
    this.#hub = new EventHub(this.#events, () => this.#state?.phase === 'done')
    this.#progress = new ProgressPump(this.#outbox, (entry) => this.#deliverOne(entry))
    this.#state = this.#storage.loadState()
    this.#info = this.#storage.getValue<RunInfo>('info')
  }

  /** Creates the run (idempotent: the same id returns the existing run) and arms the alarm. */
  async start(input: StartInput): Promise<{ created: boolean; conflict?: boolean; view: RunView }> {
    if (this.#state) {
      // A retried start also repairs a lost alarm (e.g. the first setAlarm never landed).
      if (this.#state.phase !== 'done' && (await this.ctx.storage.getAlarm()) === null) {
        await this.#schedule()
      }
      const conflict = !!input.requestHash && input.requestHash !== this.#info?.requestHash
      return { created: false, ...(conflict ? { conflict } : {}), view: this.#view() }
    }
    const now = Date.now()
    const state = createRunState({
      id: input.id,
      task: input.task,
      tools: input.tools,
      protocol: input.protocol,
      budget: input.budget,
      policy: input.policy,
      now,
      ...(input.conversation ? { conversation: input.conversation } : {}),
    })
    const info: RunInfo = {
      requestedBy: input.requestedBy,
      ...(input.requestHash ? { requestHash: input.requestHash } : {}),
      ...(input.callbackUrl ? { callbackUrl: input.callbackUrl } : {}),
      ...(input.callbackEvents ? { callbackEvents: input.callbackEvents } : {}),
      ...(input.metadata ? { metadata: input.metadata } : {}),
      ...(input.model ? { model: input.model } : {}),
      ...(input.slack ? { slack: input.slack } : {}),
      ...(input.mcpTools?.length ? { mcpTools: input.mcpTools } : {}),
    }
    this.#storage.ensureSchema()
    this.ctx.storage.transactionSync(() => {
      this.#storage.setValue('info', info)
      this.#storage.saveState(state)
      if (info.slack) this.#outbox.enqueue('slack.started', 'slack.started', {}, now)
      // A thread that starts with our first message: replies there continue this run.
      if (info.slack && !info.slack.threadTs)
        this.#outbox.enqueue(SLACK_THREAD_ID, SLACK_THREAD_ID, {}, now)
      this.#recordEvents(undefined, state, info, now)
    })
    this.#state = state
    this.#info = info
    logEvent(this.env, 'run_started', {
      runId: state.id,
      requestedBy: info.requestedBy,
      tools: state.tools,
    })
    await this.ctx.storage.setAlarm(now)
    return { created: true, view: this.#view() }
  }

  /** The run as the API shows it, or null when no run has this id. */
  async get(): Promise<RunView | null> {
    return this.#state ? this.#view() : null
  }

  /** What a run continuing this one starts from (routes/continue-run.ts). */
  async followUp(): Promise<FollowUpAnswer> {
    const state = this.#state
    if (!state) return { ok: false, code: 'no_run' }
    if (state.phase !== 'done')
      return { ok: false, code: 'run_not_finished', status: statusOf(state) }
    return { ok: true, requestedBy: this.#info!.requestedBy, source: followUpSource(state) }
  }

  /** An observation of this run, for a later run of the same conversation (else null). */
  async conversationObservation(handle: string, conversationId: string): Promise<string | null> {
    const state = this.#state
    return state ? observationForConversation(state, this.#storage, handle, conversationId) : null
  }

  /** Approve or deny one pending call. The first decision wins; later ones learn who decided. */
  async decide(input: {
    callId: string
    decision: Decision
    argsHash: string
    by: string
    reason?: string
  }): Promise<DecideResponse> {
    const state = this.#state
    if (!state) return { ok: false, code: 'no_run', message: 'no such run' }
    if (state.phase !== 'done' && (state.cancelRequested || this.#storage.getValue('cancel'))) {
      return {
        ok: false,
        code: 'run_cancelling',
        message: `run ${state.id} is being cancelled; its pending calls will not run`,
      }
    }
    const now = Date.now()
    const out = decideApproval(state, { ...input, now })
    if (!out.ok) return out
    // Synchronous from here to the write: no other request can interleave (one decision wins).
    this.ctx.storage.transactionSync(() => {
      this.#storage.saveState(out.state)
      this.#enqueueDecisions(state, out.state, now)
      queueProgress(this.#outbox, state, out.state, this.#info!, now)
      this.#recordEvents(state, out.state, this.#info!, now)
    })
    this.#state = out.state
    this.#hub.publish()
    logEvent(this.env, 'approval_decided', {
      runId: state.id,
      callId: input.callId,
      tool: out.call.name,
      decision: out.call.approval?.decision,
      by: input.by,
    })
    await this.ctx.storage.setAlarm(now)
    return {
      ok: true,
      call: { id: out.call.id, name: out.call.name, status: out.call.status },
      decidedBy: input.by,
      decision: out.call.approval!.decision!,
    }
  }

  /** Asks the run to stop; it ends at the next transition with `cancelled`. */
  async cancel(
    by: string,
    reason?: string,
  ): Promise<{ ok: boolean; code?: string; message: string }> {
    const state = this.#state
    if (!state) return { ok: false, code: 'no_run', message: 'no such run' }
    if (state.phase === 'done') {
      return {
        ok: false,
        code: 'run_finished',
        message: `run ${state.id} already finished (${state.result?.stopReason})`,
      }
    }
    const why = `cancelled by ${by}${reason ? `: ${reason}` : ''}`
    this.#storage.setValue('cancel', { by, reason: why, at: Date.now() })
    if (this.#running) {
      // The slice in flight sees the aborted signal and stops at its next transition. A side
      // effect already started is not cut off halfway (its outcome would be unknown): the
      // abort waits until its result is recorded.
      if (this.#sideEffectInFlight) this.#deferredCancel = why
      else this.#abort?.abort(new Error(why))
    } else {
      this.#state = { ...state, cancelRequested: true, cancelReason: why }
      this.#storage.saveState(this.#state)
    }
    logEvent(this.env, 'run_cancel_requested', { runId: state.id, by })
    await this.ctx.storage.setAlarm(Date.now())
    return { ok: true, message: `run ${state.id} will stop at its next transition` }
  }

  /**
   * The run's events after sequence number `after` as `text/event-stream` bytes, then live ones
   * until the run finishes; null when no run has this id.
   */
  async events(after: number): Promise<ReadableStream<Uint8Array> | null> {
    return this.#state ? this.#hub.subscribe(after) : null
  }

  /** A stored observation (what `read_observation` reads): null when there is no run here. */
  async observation(handle: string): Promise<{ text: string | null } | null> {
    return this.#state ? { text: this.#storage.getObservation(handle) ?? null } : null
  }

  override async alarm(): Promise<void> {
    if (!this.#state) return
    // Deliver first: a decision's Slack update should not wait behind the next model call.
    await this.#deliverDue()
    if (!this.#running && this.#state.phase !== 'done') await this.#runSlice()
    await this.#deliverDue()
    await this.#schedule()
  }

  async #runSlice(): Promise<void> {
    let state = this.#state!
    const cancel = this.#storage.getValue<{ reason: string }>('cancel')
    if (cancel && !state.cancelRequested) {
      state = { ...state, cancelRequested: true, cancelReason: cancel.reason }
    }
    let config: ServiceConfig
    try {
      config = loadConfig(this.env)
      this.#notBefore = undefined
      if (this.#storage.getValue('blocked')) this.#storage.setValue('blocked', null)
    } catch (err) {
      // An operator fixes a bad setting; the run waits for it instead of failing, and its view
      // says why (GET /v1/runs/:id → blocked).
      this.#notBefore = Date.now() + CONFIG_RETRY_MS
      const variable = err instanceof ConfigError ? err.variable : undefined
      this.#storage.setValue('blocked', {
        code: 'misconfigured',
        ...(variable ? { variable } : {}),
        message: redact((err as Error).message),
        since: new Date(Date.now()).toISOString(),
        retryAt: new Date(this.#notBefore).toISOString(),
      })
      logEvent(
        this.env,
        'run_waiting_for_config',
        { runId: state.id, error: (err as Error).message },
        'warn',
      )
      return
    }
    // A stricter policy deployed while the run was going applies at once (a read-only rollout
    // must reach runs in flight); a looser one never widens what the run asked for.
    if (!narrowPolicy(config.policy, state.policy).ok) {
      state = { ...state, policy: config.policy }
    }
    this.#running = true
    this.#abort = new AbortController()
    this.#progress.start(!!this.#info?.slack)
    try {
      const asked = this.#info?.mcpTools
      state = await withRunMcpTools(this.env, this.#storage, state, config.mcpServers, asked)
      const deps = { ...this.#dependencies(state), signal: this.#abort.signal }
      const out = await runSlice(state, deps, config.slice, (next, event) => {
        this.#persist(next, event)
        this.#sideEffectInFlight = event.action === 'start_call'
        if (!this.#sideEffectInFlight && this.#deferredCancel !== undefined) {
          this.#abort?.abort(new Error(this.#deferredCancel))
        }
      })
      this.#state = out.state
    } catch (err) {
      // Storage failures or a tool set that can no longer be built: record them on the run
      // instead of crashing the alarm into endless retries.
      const message = redact(err instanceof Error ? `${err.name}: ${err.message}` : String(err))
      logEvent(this.env, 'run_slice_failed', { runId: state.id, error: message }, 'error')
      const failed: RunState = {
        ...this.#state!,
        phase: 'done',
        modelCall: null,
        result: {
          ok: false,
          answer: '',
          stopReason: 'internal_error',
          error: message,
          finishedAt: Date.now(),
        },
      }
      this.#persist(failed, {
        ...happened('stop', { stopReason: 'internal_error' }),
        runId: state.id,
        phase: 'done',
        ms: 0,
      })
      this.#state = failed
    } finally {
      await this.#progress.stop()
      this.#running = false
      this.#abort = undefined
      this.#sideEffectInFlight = false
      this.#deferredCancel = undefined
    }
  }

  /**
   * Queues the Slack update for each call of the last step whose decision is new in `next`:
   * approvals, denials, expiries and cancellations all replace the buttons, once.
   */
  #enqueueDecisions(prev: RunState | undefined, next: RunState, now: number): void {
    if (!this.#info?.slack) return
    const before = new Map(prev?.steps.at(-1)?.calls.map((c) => [c.id, c.approval?.decision]))
    for (const call of next.steps.at(-1)?.calls ?? []) {
      if (!call.approval?.decision || before.get(call.id) === call.approval.decision) continue
      this.#outbox.enqueue(`slack.decision:${call.id}`, 'slack.decision', { callId: call.id }, now)
    }
  }

  /** Saves one transition and queues the notifications it causes, in one transaction. */
  #persist(next: RunState, event: TransitionEvent): void {
    const prev = this.#state
    const now = Date.now()
    this.ctx.storage.transactionSync(() => {
      this.#storage.saveState(next)
      if (
        next.phase === 'await_approval' &&
        prev?.phase !== 'await_approval' &&
        this.#info?.slack
      ) {
        for (const { call } of pendingApprovals(next)) {
          this.#outbox.enqueue(
            `slack.approval:${call.id}`,
            'slack.approval',
            { callId: call.id },
            now,
          )
        }
      }
      this.#enqueueDecisions(prev, next, now)
      if (next.phase === 'done') {
        if (this.#info?.callbackUrl) this.#outbox.enqueue('callback', 'callback', {}, now)
        if (this.#info?.slack) this.#outbox.enqueue('slack.final', 'slack.final', {}, now)
      }
      queueProgress(this.#outbox, prev, next, this.#info!, now)
      this.#recordEvents(prev, next, this.#info!, now)
    })
    this.#state = next
    this.#hub.publish()
    this.#progress.poke()
    logTransition(this.env, event, next)
  }

  /** Stores the events of a change (inside its transaction) and queues their callbacks. */
  #recordEvents(prev: RunState | undefined, next: RunState, info: RunInfo, now: number): void {
    const events = eventsBetween(prev, next)
    if (!events.length) return
    const last = this.#events.append(events, now)
    // The index row is written from the run as it is when delivered: one entry, re-armed.
    if (changesIndex(prev, next)) this.#outbox.rearm('index', 'index', {}, now)
    if (info.callbackUrl && info.callbackEvents === 'all') {
      for (let seq = last - events.length + 1; seq <= last; seq++) {
        this.#outbox.enqueue(`event:${seq}`, 'callback.event', { seq }, now)
      }
    }
  }

  async #deliverDue(): Promise<void> {
    for (const entry of this.#outbox.due(Date.now())) await this.#deliverOne(entry)
  }

  /** Delivers one outbox entry from the run as it is now; a failure is recorded for a retry. */
  async #deliverOne(entry: OutboxEntry): Promise<void> {
    try {
      const result = await deliver(entry, {
        env: this.env,
        state: this.#state!,
        info: this.#info!,
        outbox: this.#outbox,
        events: this.#events,
        runIndex: this.env.RUN_INDEX,
        slackThreads: this.env.SLACK_THREADS,
        now: Date.now(),
      })
      this.#outbox.delivered(entry.id, Date.now(), result)
      if (entry.id === PROGRESS_ID) requeueStaleProgress(this.#outbox, this.#state!, Date.now())
      logEvent(this.env, 'delivered', {
        runId: this.#state!.id,
        delivery: entry.id,
        attempts: entry.attempts + 1,
      })
    } catch (err) {
      this.#outbox.failed(entry, Date.now(), err as Error)
      logEvent(
        this.env,
        'delivery_failed',
        {
          runId: this.#state!.id,
          delivery: entry.id,
          attempts: entry.attempts + 1,
          error: (err as Error).message,
        },
        'warn',
      )
    }
  }

  /** The next alarm: now while the run can advance, else the next expiry or delivery retry. */
  async #schedule(): Promise<void> {
    const state = this.#state!
    const times: number[] = []
    // A cancel that arrived while this alarm was delivering must not wait for the expiry.
    const cancelling =
      state.phase !== 'done' &&
      (state.cancelRequested || this.#storage.getValue('cancel') !== undefined)
    if (state.phase === 'think' || state.phase === 'act' || cancelling) {
      times.push(this.#notBefore ?? Date.now())
    }
    const expiry = state.phase === 'await_approval' ? nextApprovalExpiry(state) : undefined
    if (expiry !== undefined) times.push(expiry)
    const delivery = this.#outbox.nextDue()
    if (delivery !== undefined) times.push(delivery)
    if (times.length) await this.ctx.storage.setAlarm(Math.min(...times))
    else await this.ctx.storage.deleteAlarm()
  }

  #dependencies(state: RunState): Deps {
    if (this.#deps) return this.#deps
    const config = loadConfig(this.env)
    const storage = this.#storage
    const mcp = runMcpTools(this.env, storage, state.id, config.mcpServers)
    const all = new ToolRegistry(config.tools)
    const builtIn = all.subset(state.tools.filter((t) => all.get(t))).list()
    const registry = new ToolRegistry([...builtIn, ...mcp]).forRun()
    const { pricePromptPer1kUsd: p, priceCompletionPer1kUsd: c } = config.model
    this.#deps = {
      model: createModel(config.model, this.#info?.model ? { model: this.#info.model } : {}),
      registry,
      observations: conversationObservations(
        { put: (h, t) => storage.putObservation(h, t), get: (h) => storage.getObservation(h) },
        () => this.#state!,
        this.env.RUNS,
      ),
      ...(p !== undefined || c !== undefined
        ? { pricing: pricing(p ?? 0, c ?? 0, config.model.priceCachedPromptPer1kUsd) }
        : {}),
    }
    return this.#deps
  }

  #view(): RunView {
    const blocked = this.#storage.getValue<RunView['blocked']>('blocked') ?? undefined
    return toRunView(this.#state!, this.#info!, this.#outbox.list(), blocked)
  }
}

/** The run's prices; the cached-prompt price only when one is configured. */
function pricing(promptPer1K: number, completionPer1K: number, cachedPromptPer1K?: number) {
  return cachedPromptPer1K === undefined
    ? { promptPer1K, completionPer1K }
    : { promptPer1K, completionPer1K, cachedPromptPer1K }
}
