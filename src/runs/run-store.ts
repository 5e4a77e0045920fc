import { DurableObject } from 'cloudflare:workers'
import { decideApproval } from '../kernel/approvals'
import { followUpSource } from '../kernel/conversation'
import type { ChildOutcome } from '../kernel/delegation'
import { childEnded, pollChildren, recordChildOutcome } from './child-runs'
import type { EnvVars } from '../env-vars'
import { registerSecrets } from '../security/redact'
import { retentionMsOrNone } from '../config/retention'
import { observationForConversation } from './conversation-observations'
import { checkPersonInput } from './person-input-check'
import { INDEX_KIND, OutboxPump } from './delivery/outbox-pump'
import type { StreamRequest, Subscription } from './events'
import type { RunListHub } from './index/run-list-hub'
import { logEvent } from './log'
import { skippedMcpTools } from './mcp-tools'
import { ownerOf } from './run-owner'
import { nextAlarmAt } from './next-alarm'
import { OTEL_KIND } from './otel/otel-delivery'
import type { DeliveryContext } from './outbox/delivery-context'
import type { SkippedTool } from './api-result'
import { RunRecord } from './run-record'
import { exportRun } from './run-export'
import { statusOf } from './run-status'
import { decisionAnswer } from './view'
import { SliceRunner } from './slice-runner'
import type { SlackThread } from './slack-thread'
import type {
  DecideRequest,
  DecideResponse,
  DeleteAnswer,
  FollowUpAnswer,
  OwnerAnswer,
  RunView,
  StartAnswer,
  StartInput,
} from './types'

/** What the run's object is given: the settings and the run index it writes (docs/architecture.md#events). */
type RunStoreEnv = EnvVars & {
  RUN_INDEX?: D1Database
  RUNS?: DurableObjectNamespace
  SLACK_THREADS?: DurableObjectNamespace<SlackThread>
  RUN_LIST?: DurableObjectNamespace<RunListHub>
}

/**
 * One Durable Object per run (docs/architecture.md#layers, #step-machine). HTTP-facing methods
 * only record intent and arm the alarm; the run advances in `alarm()`, one slice per invocation
 * (runs/slice-runner.ts), persisting after every transition (runs/run-record.ts), so eviction,
 * redeploys and alarm retries resume at the right sub-step; what the run owes the outside world
 * goes out from its outbox (runs/delivery/outbox-pump.ts).
 */
export class RunStore extends DurableObject<RunStoreEnv> {
  readonly #run: RunRecord
  readonly #slice: SliceRunner
  readonly #pump: OutboxPump

  constructor(ctx: DurableObjectState, env: RunStoreEnv) {
    super(ctx, env)
    registerSecrets(env)
    this.#run = new RunRecord(ctx.storage, env)
    this.#pump = new OutboxPump(this.#run.outbox, () => this.#deliveryContext())
    this.#slice = new SliceRunner(
      () => this.env,
      this.#run,
      (entry) => this.#pump.deliverOne(entry),
    )
  }

  /** Creates the run (idempotent: the same id returns the existing run) and arms the alarm. */
  async start(input: StartInput): Promise<StartAnswer> {
    const run = this.#run
    // A deleted run's id is never used again (an idempotency key, a Slack event's retry).
    if (run.deleted || run.deleting) return { created: false, deleted: true }
    if (run.state) {
      // A retried start also repairs a lost alarm (e.g. the first setAlarm never landed).
      if (run.state.phase !== 'done' && (await this.ctx.storage.getAlarm()) === null) {
        await this.#schedule()
      }
      const conflict = !!input.requestHash && input.requestHash !== run.info?.requestHash
      return { created: false, ...(conflict ? { conflict } : {}), view: run.view() }
    }
    const now = Date.now()
    const { state, info } = run.create(input, now)
    logEvent(this.env, 'run_started', {
      runId: state.id,
      requestedBy: info.requestedBy,
      tools: state.tools,
    })
    await this.ctx.storage.setAlarm(now)
    return { created: true, view: run.view() }
  }

  /** The run as the API shows it, or null when no run has this id. */
  async get(): Promise<RunView | null> {
    return this.#run.live ? this.#run.view() : null
  }

  /** When and by whom the run was deleted, or null (also null while no run had this id). */
  async deletion(): Promise<{ deletedAt: number; by: string } | null> {
    const { deleted, deleting } = this.#run
    if (deleted) return { deletedAt: deleted.deletedAt, by: deleted.by }
    return deleting ? { deletedAt: deleting.at, by: deleting.by } : null
  }

  /**
   * Deletes the run (idempotent). A finished or resting run is wiped at once; a slice in flight
   * is stopped (a side effect it started is left with its outcome unknown) and the run is wiped
   * as it ends. Either way every read answers as if the run were gone from now on.
   */
  async delete(by: string): Promise<DeleteAnswer> {
    const run = this.#run
    if (run.deleted) return { ok: true, status: 'deleted' }
    if (run.deleting) return { ok: true, status: 'deleting' }
    if (!run.state) return { ok: false, code: 'no_run' }
    const now = Date.now()
    if (!this.#slice.running) {
      run.wipe(by, 'api', now)
      await this.ctx.storage.setAlarm(now)
      return { ok: true, status: 'deleted' }
    }
    run.requestDeletion(by, now)
    this.#slice.stop(`run ${run.state.id} deleted by ${by}`)
    return { ok: true, status: 'deleting' }
  }

  /** The whole run as one JSON document (runs/run-export.ts), or null when there is none. */
  async export(): Promise<ReadableStream<Uint8Array> | null> {
    const state = this.#run.live
    if (!state) return null
    const { storage, events } = this.#run
    return exportRun({ view: this.#run.view(), state, storage, events, now: Date.now() })
  }

  /** What a run continuing this one starts from (runs/start/continuation.ts). */
  async followUp(): Promise<FollowUpAnswer> {
    const run = this.#run
    if (run.deleted || run.deleting) return { ok: false, code: 'deleted' }
    const state = run.state
    if (!state) return { ok: false, code: 'no_run' }
    if (state.phase !== 'done')
      return { ok: false, code: 'run_not_finished', status: statusOf(state) }
    const info = run.info!
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
    const { state, info } = this.#run
    return state && info ? { run: 'live', owner: ownerOf(info) } : { run: 'none' }
  }

  /** An observation of this run, for a later run of the same conversation (else null). */
  async conversationObservation(handle: string, conversationId: string): Promise<string | null> {
    const state = this.#run.live
    if (!state) return null
    return observationForConversation(state, this.#run.storage, handle, conversationId)
  }

  /**
   * Decides one pending item (docs/human-in-the-loop.md): approve or deny an approval (with
   * edited arguments, checked and hashed first), answer or decline a question, resolve a
   * connection. The first decision wins; later ones learn who decided.
   */
  async decide(input: DecideRequest): Promise<DecideResponse> {
    const state = this.#run.live
    if (!state) return { ok: false, code: 'no_run', message: 'no such run' }
    if (state.phase !== 'done' && (state.cancelRequested || this.#run.storage.getValue('cancel'))) {
      return {
        ok: false,
        code: 'run_cancelling',
        message: `run ${state.id} is being cancelled; its pending calls will not run`,
      }
    }
    const { args: _args, ...plain } = input
    // Refusals that need no look at what was sent come first (a stale hash, a decided item).
    const first = decideApproval(state, { ...plain, now: Date.now() })
    if (!first.ok) return first
    if (first.replayed) return decisionAnswer(first.call, true)
    const checked = await checkPersonInput(state, input, () => this.#slice.registry(state))
    if (!checked.ok) return checked
    const now = Date.now()
    // Read again: another decision may have landed while the edited arguments were hashed.
    const out = decideApproval(this.#run.live!, {
      ...plain,
      ...(checked.edit ? { edit: checked.edit } : {}),
      now,
    })
    if (!out.ok) return out
    if (out.replayed) return decisionAnswer(out.call, true)
    // Synchronous from here to the write: no other request can interleave (one decision wins).
    this.#run.saveDecision(out.state, now)
    logEvent(this.env, 'approval_decided', {
      runId: state.id,
      callId: input.callId,
      tool: out.call.name,
      kind: out.call.approval!.kind,
      decision: out.call.approval?.decision,
      edited: !!out.call.approval!.edit,
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
    const state = this.#run.live
    if (!state) return { ok: false }
    const known = recordChildOutcome(state, this.#run.storage, callId, outcome)
    if (known && state.phase !== 'done' && !this.#slice.running) {
      await this.ctx.storage.setAlarm(Date.now())
    }
    return { ok: known }
  }

  /** Asks the run to stop; it ends at the next transition with `cancelled`. */
  async cancel(
    by: string,
    reason?: string,
  ): Promise<{ ok: boolean; code?: string; message: string }> {
    const state = this.#run.live
    if (!state) return { ok: false, code: 'no_run', message: 'no such run' }
    if (state.phase === 'done') {
      return {
        ok: false,
        code: 'run_finished',
        message: `run ${state.id} already finished (${state.result?.stopReason})`,
      }
    }
    const why = `cancelled by ${by}${reason ? `: ${reason}` : ''}`
    this.#run.storage.setValue('cancel', { by, reason: why, at: Date.now() })
    // The slice in flight sees the aborted signal and stops at its next transition.
    if (this.#slice.running) this.#slice.cancel(why)
    else this.#run.save({ ...state, cancelRequested: true, cancelReason: why })
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
    return this.#run.live ? this.#run.hub.subscribe(request) : null
  }

  /** Event streams open on this run now (what the stream limits count). */
  async openStreams(): Promise<number> {
    return this.#run.hub.size
  }

  /** A stored observation (what `read_observation` reads): null when there is no run here. */
  async observation(handle: string): Promise<{ text: string | null } | null> {
    if (!this.#run.live) return null
    return { text: this.#run.storage.getObservation(handle) ?? null }
  }

  override async alarm(): Promise<void> {
    const run = this.#run
    if (run.deleted) return this.#deliverRemovals()
    if (!run.state) return
    // A deletion recorded by an instance that died before it could wipe the run.
    if (run.deleting && !this.#slice.running) run.wipe(run.deleting.by, 'api', Date.now())
    // Deliver first: a decision's Slack update should not wait behind the next model call. The
    // run index's row goes beside the slice and a trace export after it: neither a slow D1 nor
    // a slow collector may hold a run.
    const index = this.#pump.deliverIndex()
    await this.#pump.deliverDue(OTEL_KIND, INDEX_KIND)
    // A run waiting for a child asks it how it stands, should its report have been lost.
    if (run.live?.phase === 'await_child' && !this.#slice.running && this.env.RUNS) {
      await pollChildren(run.live, run.storage, this.env.RUNS)
    }
    if (!this.#slice.running && run.live && run.live.phase !== 'done') await this.#slice.run()
    if (run.deleting && !this.#slice.running) run.wipe(run.deleting.by, 'api', Date.now())
    const retention = run.live && retentionMsOrNone(this.env)
    const endedAt = run.live?.result?.finishedAt
    if (retention && endedAt !== undefined && Date.now() >= endedAt + retention) {
      run.wipe('retention', 'retention', Date.now())
    }
    await index
    if (run.deleted) return this.#deliverRemovals()
    await this.#pump.deliverDue()
    if (run.deleted) return this.#deliverRemovals()
    await this.#schedule()
  }

  /** A deleted run's alarm: remove the index row and the Slack links, retried until done. */
  async #deliverRemovals(): Promise<void> {
    const next = await this.#pump.deliverRemovals({
      runId: this.#run.deleted!.runId,
      runIndex: this.env.RUN_INDEX,
      runList: this.env.RUN_LIST,
      env: this.env,
      slackThreads: this.env.SLACK_THREADS,
      runs: this.env.RUNS,
    })
    if (next !== undefined) await this.ctx.storage.setAlarm(next)
    else await this.ctx.storage.deleteAlarm()
  }

  /** What a delivery is given: the run as it is now; none once it is deleted or being deleted. */
  #deliveryContext(): DeliveryContext | undefined {
    const run = this.#run
    if (!run.live) return undefined
    // Read from storage when a delivery asks (a callback's result, a trace export), once: most
    // deliveries read neither, and the pump builds a context for every entry it looks at.
    let skipped: SkippedTool[] | undefined
    let slices: number[] | undefined
    return {
      env: this.env,
      state: run.state!,
      info: run.info!,
      outbox: run.outbox,
      events: run.events,
      runIndex: this.env.RUN_INDEX,
      runList: this.env.RUN_LIST,
      slackThreads: this.env.SLACK_THREADS,
      ...(this.env.RUNS ? { runs: this.env.RUNS } : {}),
      get skippedTools() {
        return (skipped ??= skippedMcpTools(run.storage))
      },
      liveAnswer: () => this.#slice.liveAnswer,
      latestState: () => run.state!,
      get slices() {
        return (slices ??= run.slices())
      },
      now: Date.now(),
    }
  }

  /** The next alarm: now while the run can advance, else the next expiry or delivery retry. */
  async #schedule(): Promise<void> {
    const { storage, outbox } = this.#run
    const state = this.#run.state!
    const cancelPending = storage.getValue('cancel') !== undefined
    const retention = retentionMsOrNone(this.env)
    const endedAt = state.result?.finishedAt
    const deleteAt = retention && endedAt !== undefined ? endedAt + retention : undefined
    const ended = childEnded(state, storage)
    const notBefore = this.#slice.notBefore
    const at = nextAlarmAt(state, cancelPending, outbox, notBefore, deleteAt, ended)
    if (at !== undefined) await this.ctx.storage.setAlarm(at)
    else await this.ctx.storage.deleteAlarm()
  }
}
