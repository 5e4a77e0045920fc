import type { RunState } from '../kernel/state'
import type { TransitionEvent } from '../kernel/transition'
import type { EnvVars } from '../env-vars'
import { loadConfig } from '../config'
import { otelOrNone } from '../config/otel'
import {
  DELETE_REQUEST_KEY,
  logDeletion,
  TOMBSTONE_KEY,
  wipeRun,
  type DeleteRequest,
  type Tombstone,
} from './deletion'
import { EventHub, EventLog, LiveDeltas } from './events'
import { logTransition } from './log'
import { skippedMcpTools } from './mcp-tools'
import { newRun } from './new-run'
import { Outbox } from './outbox/outbox'
import { RunStorage } from './storage'
import { queueDecisionEffects, queueRunStarted, queueTransitionEffects } from './transition-effects'
import type { RunInfo, RunView, StartInput } from './types'
import { toRunView } from './view'

/** When each slice began, for the trace (a bounded list in the run's own storage). */
const SLICES_KEY = 'slices'
const MAX_SLICES_KEPT = 500

/**
 * A run as its object keeps it (docs/architecture.md#step-machine): the state, who asked, the
 * deletion records, and every write that changes them. A change and what it causes (outbox
 * entries, events) are written in one transaction, then told to the event streams.
 */
export class RunRecord {
  readonly storage: RunStorage
  readonly outbox: Outbox
  readonly events: EventLog
  readonly hub: EventHub
  readonly deltas: LiveDeltas
  state: RunState | undefined
  info: RunInfo | undefined
  /** The run was deleted: only this record of it is left. */
  deleted: Tombstone | undefined
  /** A deletion that waits for the slice in flight to stop. */
  deleting: DeleteRequest | undefined

  constructor(
    private readonly storageApi: DurableObjectStorage,
    private readonly env: EnvVars,
  ) {
    this.storage = new RunStorage(storageApi.sql)
    this.outbox = new Outbox(storageApi.sql)
    this.events = new EventLog(storageApi.sql, () => this.state!.id, this.storage.hasEventTable)
    this.hub = new EventHub(
      this.events,
      () => this.state!.id,
      () => this.state?.phase === 'done',
    )
    this.deltas = new LiveDeltas(
      (frames) => this.hub.sendLive(frames),
      () => this.hub.size > 0,
    )
    this.deleted = this.storage.getValue<Tombstone>(TOMBSTONE_KEY)
    this.deleting = this.storage.getValue<DeleteRequest>(DELETE_REQUEST_KEY)
    this.state = this.deleted ? undefined : this.storage.loadState()
    this.info = this.storage.getValue<RunInfo>('info')
  }

  /** The run, unless it is deleted or being deleted: then every read is as if none existed. */
  get live(): RunState | undefined {
    return this.deleted || this.deleting ? undefined : this.state
  }

  /** Writes a new run and what its start causes; returns it. */
  create(input: StartInput, now: number): { state: RunState; info: RunInfo } {
    const { state, info } = newRun(input, now)
    if (this.storage.ensureSchema()) this.outbox.startsEmpty()
    this.#transaction(() => {
      this.storage.saveState(state, { info })
      this.info = info
      queueRunStarted(this.sinks(), info, state, now)
    })
    this.state = state
    this.info = info
    return { state, info }
  }

  /** Saves a decided approval and what it causes, in one transaction. */
  saveDecision(next: RunState, now: number): void {
    const prev = this.state!
    this.#transaction(() => {
      this.outbox.flush()
      this.storage.saveState(next)
      queueDecisionEffects(this.sinks(), this.info!, prev, next, now)
    })
    this.state = next
    this.hub.publish()
  }

  /** Saves one transition and queues what it causes, in one transaction. */
  persist(next: RunState, event: TransitionEvent): void {
    const prev = this.state
    // The reply's pieces go out before the events that store it (the hub writes stored events
    // that are still waiting for their write first, so the order holds).
    this.deltas.flush()
    this.#transaction(() => {
      // What the outbox held back (the index row's mark) goes into this commit.
      this.outbox.flush()
      this.storage.saveState(next)
      queueTransitionEffects(this.sinks(), this.info!, prev, next, Date.now())
    })
    this.state = next
    this.hub.publish()
    logTransition(this.env, event, next)
  }

  /** Saves a state changed outside a slice (a cancel asked for while none runs). */
  save(next: RunState): void {
    this.state = next
    this.storage.saveState(next)
  }

  /** Records a deletion that waits for the slice in flight. */
  requestDeletion(by: string, at: number): void {
    this.deleting = { by, at }
    this.storage.setValue(DELETE_REQUEST_KEY, this.deleting)
  }

  /**
   * Removes every row of the run and queues the removal of its other copies, in one
   * transaction; only the tombstone stays. Open event streams end.
   */
  wipe(by: string, reason: 'api' | 'retention', now: number): void {
    const state = this.state!
    const tombstone: Tombstone = { runId: state.id, deletedAt: now, by }
    this.#transaction(() => {
      this.outbox.flush()
      wipeRun(this.storageApi.sql, this.outbox, state, this.info!, tombstone)
    })
    // Every table was emptied behind the back of the parts that keep track of them.
    this.#forget()
    logDeletion(this.env, state, tombstone, reason)
    this.deleted = tombstone
    this.deleting = undefined
    this.state = undefined
    this.info = undefined
    this.hub.close()
  }

  /** Notes when a slice began, for the trace (only while traces are exported). */
  recordSlice(at: number): void {
    if (!otelOrNone(this.env)) return
    const slices = this.slices()
    if (slices.length < MAX_SLICES_KEPT) this.storage.setValue(SLICES_KEY, [...slices, at])
  }

  /** When each slice of the run began. */
  slices(): number[] {
    return this.storage.getValue<number[]>(SLICES_KEY) ?? []
  }

  /** The run as the API shows it. */
  view(): RunView {
    const blocked = this.storage.getValue<RunView['blocked']>('blocked') ?? undefined
    const skipped = skippedMcpTools(this.storage)
    return toRunView(this.state!, this.info!, this.outbox.list(), blocked, skipped)
  }

  /** SLACK_STREAM and SLACK_ASSISTANT; off while the settings do not load (the slice says why). */
  slackSettings(): { stream: boolean; assistant: boolean } {
    try {
      return loadConfig(this.env).slack
    } catch {
      return { stream: false, assistant: false }
    }
  }

  /**
   * `write` in one transaction. One that throws rolls back: what the storage, the outbox and the
   * event log keep of the tables (to spare reads and unchanged writes) is read again.
   */
  #transaction(write: () => void): void {
    try {
      this.storageApi.transactionSync(write)
    } catch (err) {
      this.#forget()
      throw err
    }
  }

  #forget(): void {
    this.storage.forget()
    this.outbox.forget()
    this.events.forget()
  }

  /** Where a change's effects are queued. */
  private sinks() {
    const assistant = !!this.info?.slack && this.slackSettings().assistant
    return {
      outbox: this.outbox,
      events: this.events,
      otel: !!otelOrNone(this.env),
      assistant,
    }
  }
}
