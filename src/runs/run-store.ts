import { DurableObject } from 'cloudflare:workers'
import { decideApproval } from '../kernel/approvals'
import { runSlice } from '../kernel/machine'
import { followUpSource } from '../kernel/conversation'
import type { Call, RunState } from '../kernel/state'
import type { Deps, TransitionEvent } from '../kernel/transition'
import type { ChildOutcome } from '../kernel/delegation'
import { childEnded, pollChildren, recordChildOutcome } from './child-runs'
import type { EnvVars } from '../env-vars'
import { registerSecrets } from '../security/redact'
import { McpSessions } from '../mcp/index'
import { loadConfig } from '../config'
import { otelOrNone } from '../config/otel'
import { retentionMsOrNone } from '../config/retention'
import { observationForConversation } from './conversation-observations'
import {
  DELETE_REQUEST_KEY,
  deliverRemoval,
  logDeletion,
  TOMBSTONE_KEY,
  wipeRun,
  type DeleteRequest,
  type Tombstone,
} from './deletion'
import { EventHub, EventLog, LiveDeltas, type StreamRequest, type Subscription } from './events'
import { internalFailure } from './internal-failure'
import type { RunListHub } from './index/run-list-hub'
import { logEvent, logTransition } from './log'
import { reservedToolNames, skippedMcpTools, withRunMcpTools } from './mcp-tools'
import { newRun } from './new-run'
import { ownerOf } from './run-owner'
import { nextAlarmAt } from './next-alarm'
import { OTEL_KIND } from './otel/otel-delivery'
import { deliverEntry, Outbox, type LiveAnswer, type OutboxEntry } from './outbox'
import { configForSlice, stateForSlice } from './run-config'
import { runDependencies } from './run-deps'
import { exportRun } from './run-export'
import { queueStreamText, SlackPumps, STREAM_ID, type SlackThread } from './slack'
import { RunStorage } from './storage'
import { queueDecisionEffects, queueRunStarted, queueTransitionEffects } from './transition-effects'
import type {
  DecideRequest,
  DecideResponse,
  DeleteAnswer,
  FollowUpAnswer,
  OwnerAnswer,
  RunInfo,
  RunView,
  StartAnswer,
  StartInput,
} from './types'
import { statusOf, toRunView } from './view'

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
  RUN_LIST?: DurableObjectNamespace<RunListHub>
}

/** When each slice began, for the trace (a bounded list in the run's own storage). */
const SLICES_KEY = 'slices'
const MAX_SLICES_KEPT = 500

function recordSlice(storage: RunStorage, at: number): void {
  const slices = storage.getValue<number[]>(SLICES_KEY) ?? []
  if (slices.length < MAX_SLICES_KEPT) storage.setValue(SLICES_KEY, [...slices, at])
}

export class RunStore extends DurableObject<RunStoreEnv> {
  readonly #storage: RunStorage
  readonly #outbox: Outbox
  readonly #events: EventLog
  readonly #hub: EventHub
  readonly #deltas: LiveDeltas
  /** Slack progress, the answer stream and the thread status, sent while a slice runs. */
  readonly #slack: SlackPumps
  /** The native reply being written, streamed into the run's Slack thread. */
  #liveAnswer: LiveAnswer | undefined
  /** The slice's MCP sessions: opened on first use, ended when the slice ends. */
  readonly #mcpSessions = new McpSessions()
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
  /** The run was deleted: only this record of it is left. */
  #deleted: Tombstone | undefined
  /** A deletion that waits for the slice in flight to stop. */
  #deleting: DeleteRequest | undefined

  constructor(ctx: DurableObjectState, env: RunStoreEnv) {
    super(ctx, env)
    registerSecrets(env)
    this.#storage = new RunStorage(ctx.storage.sql)
    this.#outbox = new Outbox(ctx.storage.sql)
    this.#events = new EventLog(ctx.storage.sql, () => this.#state!.id)
    this.#hub = new EventHub(
      this.#events,
      () => this.#state!.id,
      () => this.#state?.phase === 'done',
    )
    this.#deltas = new LiveDeltas(
      (frames) => this.#hub.sendLive(frames),
      () => this.#hub.size > 0,
    )
    this.#slack = new SlackPumps(this.#outbox, (entry) => this.#deliverOne(entry))
    this.#deleted = this.#storage.getValue<Tombstone>(TOMBSTONE_KEY)
    this.#deleting = this.#storage.getValue<DeleteRequest>(DELETE_REQUEST_KEY)
    this.#state = this.#deleted ? undefined : this.#storage.loadState()
    this.#info = this.#storage.getValue<RunInfo>('info')
  }

  /** The run, unless it is deleted or being deleted: then every read is as if none existed. */
  get #live(): RunState | undefined {
    return this.#deleted || this.#deleting ? undefined : this.#state
  }

  /** Creates the run (idempotent: the same id returns the existing run) and arms the alarm. */
  async start(input: StartInput): Promise<StartAnswer> {
    // A deleted run's id is never used again (an idempotency key, a Slack event's retry).
    if (this.#deleted || this.#deleting) return { created: false, deleted: true }
    if (this.#state) {
      // A retried start also repairs a lost alarm (e.g. the first setAlarm never landed).
      if (this.#state.phase !== 'done' && (await this.ctx.storage.getAlarm()) === null) {
        await this.#schedule()
      }
      const conflict = !!input.requestHash && input.requestHash !== this.#info?.requestHash
      return { created: false, ...(conflict ? { conflict } : {}), view: this.#view() }
    }
    const now = Date.now()
    const { state, info } = newRun(input, now)
    this.#storage.ensureSchema()
    this.ctx.storage.transactionSync(() => {
      this.#storage.setValue('info', info)
      this.#storage.saveState(state)
      this.#info = info
      queueRunStarted(this.#sinks(), info, state, now)
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
    return this.#live ? this.#view() : null
  }

  /** When and by whom the run was deleted, or null (also null while no run had this id). */
  async deletion(): Promise<{ deletedAt: number; by: string } | null> {
    if (this.#deleted) return { deletedAt: this.#deleted.deletedAt, by: this.#deleted.by }
    return this.#deleting ? { deletedAt: this.#deleting.at, by: this.#deleting.by } : null
  }

  /**
   * Deletes the run (idempotent). A finished or resting run is wiped at once; a slice in flight
   * is stopped (a side effect it started is left with its outcome unknown) and the run is wiped
   * as it ends. Either way every read answers as if the run were gone from now on.
   */
  async delete(by: string): Promise<DeleteAnswer> {
    if (this.#deleted) return { ok: true, status: 'deleted' }
    if (this.#deleting) return { ok: true, status: 'deleting' }
    if (!this.#state) return { ok: false, code: 'no_run' }
    const now = Date.now()
    if (!this.#running) {
      this.#wipe(by, 'api', now)
      await this.ctx.storage.setAlarm(now)
      return { ok: true, status: 'deleted' }
    }
    this.#deleting = { by, at: now }
    this.#storage.setValue(DELETE_REQUEST_KEY, this.#deleting)
    this.#abort?.abort(new Error(`run ${this.#state.id} deleted by ${by}`))
    return { ok: true, status: 'deleting' }
  }

  /** The whole run as one JSON document (runs/run-export.ts), or null when there is none. */
  async export(): Promise<ReadableStream<Uint8Array> | null> {
    const state = this.#live
    if (!state) return null
    return exportRun({
      view: this.#view(),
      state,
      storage: this.#storage,
      events: this.#events,
      now: Date.now(),
    })
  }

  /** What a run continuing this one starts from (routes/continue-run.ts). */
  async followUp(): Promise<FollowUpAnswer> {
    if (this.#deleted || this.#deleting) return { ok: false, code: 'deleted' }
    const state = this.#state
    if (!state) return { ok: false, code: 'no_run' }
    if (state.phase !== 'done')
      return { ok: false, code: 'run_not_finished', status: statusOf(state) }
    const info = this.#info!
    return {
      ok: true,
      requestedBy: info.requestedBy,
      owner: ownerOf(info),
      source: followUpSource(state),
    }
  }

  /** Whose run it is (runs/run-owner.ts), for a token that may reach only its own runs. */
  async owner(): Promise<OwnerAnswer> {
    const gone = await this.deletion()
    if (gone) return { run: 'deleted', by: gone.by }
    return this.#state && this.#info ? { run: 'live', owner: ownerOf(this.#info) } : { run: 'none' }
  }

  /** An observation of this run, for a later run of the same conversation (else null). */
  async conversationObservation(handle: string, conversationId: string): Promise<string | null> {
    const state = this.#live
    return state ? observationForConversation(state, this.#storage, handle, conversationId) : null
  }

  /** Approve or deny one pending call. The first decision wins; later ones learn who decided. */
  async decide(input: DecideRequest): Promise<DecideResponse> {
    const state = this.#live
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
    if (out.replayed) return decisionAnswer(out.call, true)
    // Synchronous from here to the write: no other request can interleave (one decision wins).
    this.ctx.storage.transactionSync(() => {
      this.#storage.saveState(out.state)
      queueDecisionEffects(this.#sinks(), this.#info!, state, out.state, now)
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
    return decisionAnswer(out.call, false)
  }

  /**
   * A child run reports its end (its outbox retries until this answers): the outcome is stored
   * for the call that started it and the run wakes to record it. Idempotent; false when this
   * run has no such child.
   */
  async childFinished(callId: string, outcome: ChildOutcome): Promise<{ ok: boolean }> {
    const state = this.#live
    if (!state) return { ok: false }
    const known = recordChildOutcome(state, this.#storage, callId, outcome)
    if (known && state.phase !== 'done' && !this.#running) {
      await this.ctx.storage.setAlarm(Date.now())
    }
    return { ok: known }
  }

  /** Asks the run to stop; it ends at the next transition with `cancelled`. */
  async cancel(
    by: string,
    reason?: string,
  ): Promise<{ ok: boolean; code?: string; message: string }> {
    const state = this.#live
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
   * The run's events after sequence number `request.after` as `text/event-stream` bytes, then
   * live ones until the run finishes, unless a stream limit is reached; null when no run has
   * this id.
   */
  async events(request: StreamRequest): Promise<Subscription | null> {
    return this.#live ? this.#hub.subscribe(request) : null
  }

  /** Event streams open on this run now (what the stream limits count). */
  async openStreams(): Promise<number> {
    return this.#hub.size
  }

  /** A stored observation (what `read_observation` reads): null when there is no run here. */
  async observation(handle: string): Promise<{ text: string | null } | null> {
    return this.#live ? { text: this.#storage.getObservation(handle) ?? null } : null
  }

  override async alarm(): Promise<void> {
    if (this.#deleted) return this.#deliverRemovals()
    if (!this.#state) return
    // A deletion recorded by an instance that died before it could wipe the run.
    if (this.#deleting && !this.#running) this.#wipe(this.#deleting.by, 'api', Date.now())
    // Deliver first: a decision's Slack update should not wait behind the next model call. A
    // trace export waits until after the slice: a slow collector must never hold a run.
    await this.#deliverDue(OTEL_KIND)
    // A run waiting for a child asks it how it stands, should its report have been lost.
    if (this.#live?.phase === 'await_child' && !this.#running && this.env.RUNS) {
      await pollChildren(this.#live, this.#storage, this.env.RUNS)
    }
    if (!this.#running && this.#live && this.#live.phase !== 'done') await this.#runSlice()
    if (this.#deleting && !this.#running) this.#wipe(this.#deleting.by, 'api', Date.now())
    const retention = this.#live && retentionMsOrNone(this.env)
    const endedAt = this.#live?.result?.finishedAt
    if (retention && endedAt !== undefined && Date.now() >= endedAt + retention) {
      this.#wipe('retention', 'retention', Date.now())
    }
    if (this.#deleted) return this.#deliverRemovals()
    await this.#deliverDue()
    if (this.#deleted) return this.#deliverRemovals()
    await this.#schedule()
  }

  /**
   * Removes every row of the run and queues the removal of its other copies, in one
   * transaction; only the tombstone stays. Open event streams end.
   */
  #wipe(by: string, reason: 'api' | 'retention', now: number): void {
    const state = this.#state!
    const tombstone: Tombstone = { runId: state.id, deletedAt: now, by }
    this.ctx.storage.transactionSync(() =>
      wipeRun(this.ctx.storage.sql, this.#outbox, state, this.#info!, tombstone),
    )
    logDeletion(this.env, state, tombstone, reason)
    this.#deleted = tombstone
    this.#deleting = undefined
    this.#state = undefined
    this.#info = undefined
    this.#hub.close()
  }

  /** A deleted run's alarm: remove the index row and the Slack links, retried until done. */
  async #deliverRemovals(): Promise<void> {
    const runId = this.#deleted!.runId
    for (const entry of this.#outbox.due(Date.now())) {
      try {
        const result = await deliverRemoval(entry, {
          runId,
          runIndex: this.env.RUN_INDEX,
          runList: this.env.RUN_LIST,
          env: this.env,
          slackThreads: this.env.SLACK_THREADS,
          runs: this.env.RUNS,
          now: Date.now(),
        })
        this.#outbox.delivered(entry.id, Date.now(), result)
      } catch (err) {
        this.#outbox.failed(entry, Date.now(), err as Error)
        logEvent(this.env, 'delivery_failed', { runId, delivery: entry.id }, 'warn')
      }
    }
    const next = this.#outbox.nextDue()
    if (next !== undefined) await this.ctx.storage.setAlarm(next)
    else await this.ctx.storage.deleteAlarm()
  }

  async #runSlice(): Promise<void> {
    const loaded = configForSlice(this.env, this.#storage, this.#state!.id)
    this.#notBefore = loaded.ok ? undefined : loaded.retryAt
    if (!loaded.ok) return
    const { config } = loaded
    const cancel = this.#storage.getValue<{ reason: string }>('cancel')
    let state = stateForSlice(this.#state!, cancel, config)
    if (otelOrNone(this.env)) recordSlice(this.#storage, Date.now())
    this.#running = true
    this.#abort = new AbortController()
    const slack = !!this.#info?.slack
    this.#slack.start(slack, slack ? this.#slackSettings() : { stream: false, assistant: false })
    try {
      const { mcpServers } = config
      const asked = this.#info?.mcpTools
      const sessions = this.#mcpSessions
      const reserved = reservedToolNames(config)
      state = await withRunMcpTools(
        this.env,
        this.#storage,
        state,
        mcpServers,
        asked,
        sessions,
        reserved,
      )
      const deps: Deps = {
        ...this.#dependencies(state),
        signal: this.#abort.signal,
        onModelText: (step, protocol, delta) => {
          this.#deltas.push(protocol === 'native' ? 'answer_delta' : 'thought_delta', step, delta)
          if (protocol === 'native') this.#streamAnswer(step, delta)
        },
      }
      const out = await runSlice(state, deps, config.slice, (next, event, follows) => {
        this.#persist(next, event)
        this.#sideEffectInFlight = follows === 'side_effect'
        if (!this.#sideEffectInFlight && this.#deferredCancel !== undefined) {
          this.#abort?.abort(new Error(this.#deferredCancel))
        }
      })
      this.#state = out.state
    } catch (err) {
      const failed = internalFailure(this.#state!, err, Date.now())
      const error = failed.state.result!.error
      logEvent(this.env, 'run_slice_failed', { runId: state.id, error }, 'error')
      this.#persist(failed.state, failed.event)
    } finally {
      this.#deltas.flush()
      await this.#slack.stop()
      await this.#mcpSessions.close()
      this.#running = false
      this.#abort = undefined
      this.#sideEffectInFlight = false
      this.#deferredCancel = undefined
    }
  }

  /** Saves one transition and queues what it causes, in one transaction. */
  #persist(next: RunState, event: TransitionEvent): void {
    const prev = this.#state
    // The reply's pieces go out before the events that store it (the hub writes stored events
    // that are still waiting for their write first, so the order holds).
    this.#deltas.flush()
    this.ctx.storage.transactionSync(() => {
      this.#storage.saveState(next)
      queueTransitionEffects(this.#sinks(), this.#info!, prev, next, Date.now())
    })
    this.#state = next
    this.#hub.publish()
    this.#slack.poke()
    logTransition(this.env, event, next)
  }

  #sinks() {
    const assistant = !!this.#info?.slack && this.#slackSettings().assistant
    return {
      outbox: this.#outbox,
      events: this.#events,
      otel: !!otelOrNone(this.env),
      assistant,
    }
  }

  /** SLACK_STREAM and SLACK_ASSISTANT; off while the settings do not load (the slice says why). */
  #slackSettings(): { stream: boolean; assistant: boolean } {
    try {
      return loadConfig(this.env).slack
    } catch {
      return { stream: false, assistant: false }
    }
  }

  /** A piece of a native reply: kept for the Slack stream, which is sent at most once a gap. */
  #streamAnswer(step: number, delta: string): void {
    if (!this.#info?.slack || !this.#slackSettings().stream) return
    const live = this.#liveAnswer
    this.#liveAnswer =
      live?.step === step ? { step, text: live.text + delta } : { step, text: delta }
    if (!this.#liveAnswer.text.trim() && !this.#outbox.get(STREAM_ID)) return
    queueStreamText(this.#outbox, Date.now())
    this.#slack.pokeStream()
  }

  async #deliverDue(skipKind?: string): Promise<void> {
    for (const entry of this.#outbox.due(Date.now())) {
      if (!this.#live) return
      if (entry.kind === skipKind) continue
      await this.#deliverOne(entry)
    }
  }

  /** Delivers one outbox entry from the run as it is now; a failure is recorded for a retry. */
  async #deliverOne(entry: OutboxEntry): Promise<void> {
    // A run being deleted tells nobody anything more.
    if (!this.#live) return
    return deliverEntry(entry, {
      env: this.env,
      state: this.#state!,
      info: this.#info!,
      outbox: this.#outbox,
      events: this.#events,
      runIndex: this.env.RUN_INDEX,
      runList: this.env.RUN_LIST,
      slackThreads: this.env.SLACK_THREADS,
      ...(this.env.RUNS ? { runs: this.env.RUNS } : {}),
      skippedTools: skippedMcpTools(this.#storage),
      liveAnswer: () => this.#liveAnswer,
      latestState: () => this.#state!,
      slices: this.#storage.getValue<number[]>(SLICES_KEY) ?? [],
      now: Date.now(),
    })
  }

  /** The next alarm: now while the run can advance, else the next expiry or delivery retry. */
  async #schedule(): Promise<void> {
    const cancelPending = this.#storage.getValue('cancel') !== undefined
    const retention = retentionMsOrNone(this.env)
    const endedAt = this.#state!.result?.finishedAt
    const deleteAt = retention && endedAt !== undefined ? endedAt + retention : undefined
    const ended = childEnded(this.#state!, this.#storage)
    const at = nextAlarmAt(
      this.#state!,
      cancelPending,
      this.#outbox,
      this.#notBefore,
      deleteAt,
      ended,
    )
    if (at !== undefined) await this.ctx.storage.setAlarm(at)
    else await this.ctx.storage.deleteAlarm()
  }

  #dependencies(state: RunState): Deps {
    const current = () => this.#state!
    const sessions = this.#mcpSessions
    // A child's approval cards go to this run's thread: its ts once the first message is out.
    const thread = () =>
      (this.#outbox.get('slack.started')?.result as { ts?: string } | undefined)?.ts
    this.#deps ??= runDependencies(
      this.env,
      this.#storage,
      state,
      this.#info,
      current,
      sessions,
      thread,
    )
    return this.#deps
  }

  #view(): RunView {
    const blocked = this.#storage.getValue<RunView['blocked']>('blocked') ?? undefined
    const skipped = skippedMcpTools(this.#storage)
    return toRunView(this.#state!, this.#info!, this.#outbox.list(), blocked, skipped)
  }
}

/** A decision as the API answers it; `replayed` when it was recorded by an earlier request. */
function decisionAnswer(call: Call, replayed: boolean): DecideResponse {
  return {
    ok: true,
    call: { id: call.id, name: call.name, status: call.status },
    decidedBy: call.approval!.decidedBy!,
    decision: call.approval!.decision!,
    ...(replayed ? { replayed: true as const } : {}),
  }
}
