import { runSlice } from '../kernel/machine'
import type { RunState } from '../kernel/state'
import type { Deps, TransitionEvent } from '../kernel/transition'
import type { ToolRegistry } from '../kernel/registry'
import type { EnvVars } from '../env-vars'
import { HeldMcpCalls, McpSessions } from '../mcp/index'
import { loadConfig } from '../config'
import { personOf, sessionAuthOf, type ConnectionsEnv } from './connections/connections'
import { internalFailure } from './internal-failure'
import { logEvent } from './log'
import { releaseClosedQuestions } from './mcp-held-questions'
import { reservedToolNames, withRunMcpTools } from './mcp-tools'
import type { LiveAnswer } from './outbox/delivery-context'
import type { OutboxEntry } from './outbox/outbox'
import { configForSlice, stateForSlice } from './run-config'
import { runDependencies } from './run-deps'
import type { RunRecord } from './run-record'
import { queueStreamText, SlackPumps, STREAM_ID } from './slack'

/**
 * The run's slice loop (docs/architecture.md#step-machine): one `runSlice` of the kernel per
 * alarm, each transition persisted as it happens, with what runs beside it: the live text
 * pieces, Slack progress and the answer stream, the slice's MCP sessions, and a cancel or a
 * deletion arriving while the slice runs.
 */
export class SliceRunner {
  /** Slack progress, the answer stream and the thread status, sent while a slice runs. */
  readonly #slack: SlackPumps
  /**
   * MCP calls held open on a server's question while a person answers: they outlive their
   * slice, never the object (docs/mcp.md#questions-from-servers).
   */
  readonly #heldMcpCalls = new HeldMcpCalls()
  /**
   * The slice's MCP sessions: opened on first use, ended when the slice ends (but for one that
   * holds a call on a question).
   */
  readonly #mcpSessions = new McpSessions(
    () =>
      sessionAuthOf(
        this.env as ConnectionsEnv,
        loadConfig(this.env).mcpServers,
        this.record.info ? personOf(this.record.info) : null,
      ),
    { hold: this.#heldMcpCalls },
  )
  /** The native reply being written, streamed into the run's Slack thread. */
  #liveAnswer: LiveAnswer | undefined
  #running = false
  #abort: AbortController | undefined
  /** A side effect was persisted as started and has no result yet (a cancel must wait). */
  #sideEffectInFlight = false
  /** A cancel that arrived while a side effect was in flight: applied once it is recorded. */
  #deferredCancel: string | undefined
  #deps: Deps | undefined
  /** Set while a configuration error keeps the run from advancing: when to look again. */
  #notBefore: number | undefined

  constructor(
    // The object's settings as they are at each slice (read anew: the object's own `env`).
    private readonly settings: () => EnvVars,
    private readonly record: RunRecord,
    deliver: (entry: OutboxEntry) => Promise<void>,
  ) {
    this.#slack = new SlackPumps(record.outbox, deliver)
  }

  private get env(): EnvVars {
    return this.settings()
  }

  /** A slice is running now. */
  get running(): boolean {
    return this.#running
  }

  /** When a run held back by its settings is looked at again (undefined: not held back). */
  get notBefore(): number | undefined {
    return this.#notBefore
  }

  /** The reply being written now, for the Slack answer stream. */
  get liveAnswer(): LiveAnswer | undefined {
    return this.#liveAnswer
  }

  /**
   * Stops the slice in flight at its next transition. A side effect already started is not cut
   * off halfway (its outcome would be unknown): the stop waits until its result is recorded.
   */
  cancel(why: string): void {
    if (this.#sideEffectInFlight) this.#deferredCancel = why
    else this.#abort?.abort(new Error(why))
  }

  /** Stops the slice in flight now (a deletion: a side effect started is left unknown). */
  stop(why: string): void {
    this.#abort?.abort(new Error(why))
  }

  /** Advances the run by one slice; a failure of the object's own ends the run explicitly. */
  async run(): Promise<void> {
    const loaded = configForSlice(this.env, this.record.storage, this.record.state!.id)
    this.#notBefore = loaded.ok ? undefined : loaded.retryAt
    if (!loaded.ok) return
    const { config } = loaded
    const cancel = this.record.storage.getValue<{ reason: string }>('cancel')
    let state = stateForSlice(this.record.state!, cancel, config)
    this.record.recordSlice(Date.now())
    this.#running = true
    this.#abort = new AbortController()
    const slack = !!this.record.info?.slack
    this.#slack.start(
      slack,
      slack ? this.record.slackSettings() : { stream: false, assistant: false },
    )
    try {
      state = await withRunMcpTools(
        this.env,
        this.record.storage,
        state,
        config.mcpServers,
        this.record.info?.mcpTools,
        this.#mcpSessions,
        reservedToolNames(config),
      )
      const deps: Deps = {
        ...this.#dependencies(state),
        signal: this.#abort.signal,
        onModelText: (step, protocol, delta, attempt) => {
          this.record.deltas.push(
            protocol === 'native' ? 'answer_delta' : 'thought_delta',
            { step, attempt },
            delta,
          )
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
      this.record.state = out.state
    } catch (err) {
      const failed = internalFailure(this.record.state!, err, Date.now())
      const error = failed.state.result!.error
      logEvent(this.env, 'run_slice_failed', { runId: state.id, error }, 'error')
      this.#persist(failed.state, failed.event)
    } finally {
      this.record.deltas.flush()
      await this.#slack.stop()
      await releaseClosedQuestions(this.#heldMcpCalls, this.record.state)
      await this.#mcpSessions.close()
      this.#running = false
      this.#abort = undefined
      this.#sideEffectInFlight = false
      this.#deferredCancel = undefined
    }
  }

  /** Saves one transition (runs/run-record.ts) and wakes the Slack progress pump. */
  #persist(next: RunState, event: TransitionEvent): void {
    this.record.persist(next, event)
    this.#slack.poke()
  }

  /** A piece of a native reply: kept for the Slack stream, which is sent at most once a gap. */
  #streamAnswer(step: number, delta: string): void {
    if (!this.record.info?.slack || !this.record.slackSettings().stream) return
    const live = this.#liveAnswer
    this.#liveAnswer =
      live?.step === step ? { step, text: live.text + delta } : { step, text: delta }
    if (!this.#liveAnswer.text.trim() && !this.record.outbox.get(STREAM_ID)) return
    queueStreamText(this.record.outbox, Date.now())
    this.#slack.pokeStream()
  }

  /** The run's tools, as its slices see them (an approver's edit is checked against them). */
  registry(state: RunState): ToolRegistry {
    return this.#dependencies(state).registry
  }

  #dependencies(state: RunState): Deps {
    const current = () => this.record.state!
    // A child's approval cards go to this run's thread: its ts once the first message is out.
    const thread = () =>
      (this.record.outbox.get('slack.started')?.result as { ts?: string } | undefined)?.ts
    this.#deps ??= runDependencies(
      this.env,
      this.record.storage,
      state,
      this.record.info,
      current,
      this.#mcpSessions,
      thread,
    )
    return this.#deps
  }
}
