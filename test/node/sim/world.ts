/**
 * One simulated schedule: the real Worker's run machine (routes' `startRun`, the `RunStore`
 * object, the kernel, the outbox, the run index) in a simulated world: the scheduler (sim.ts),
 * Durable Object storage and alarms (host.ts, sim-storage.ts), D1 (sim-d1.ts), the network
 * (network.ts) with the model provider and the receiver of tools and callbacks on it, and people
 * who decide approvals and cancel. Everything the checker needs is kept as evidence.
 */
import { FAKE_MCP_HOST, FAKE_MCP_TOKEN, FakeMcp } from '../../fakes/fake-mcp'
import type { FakeReply } from '../../fakes/fake-openai'
import { RunStore } from '../../../src/runs/run-store'
import { startRun } from '../../../src/runs/start/start-run'
import { RunStorage } from '../../../src/runs/storage'
import type { Call, RunState } from '../../../src/kernel/state'
import type { ChildOutcome } from '../../../src/kernel/delegation'
import type { Env } from '../../../src/env'
import type { Chooser } from './chooser'
import { useSimulation } from './globals'
import { SimNamespace, SimObject } from './host'
import { SimNetwork } from './network'
import { Sim, type FaultBudget, type SimEvent } from './sim'
import { SimD1 } from './sim-d1'
import { SimSqlCursor } from './sim-storage'
import { PROVIDER, PROVIDER_KEY, RECEIVER, type PersonAction, type Scenario } from './scenarios'
import { Checker, hashOf, type Violation } from './invariants'
import { receiver, SimProvider, type ModelAsk } from './hosts'
import { SimSlackThreads, slackEnv } from './slack-sim'
import { SlackPart } from './slack-world'

/** A deliberately broken platform, for the self-check. */
export type Breakage =
  'lose_commit' | 'concurrent_alarm' | 'provider_twice' | 'slack_twice' | 'slack_drops_edit'

export interface WorldOptions {
  chooser: Chooser
  budget: FaultBudget
  seed: number
  /** Random mode: any ready event may go next, and faults stop after this many turns. */
  random?: { faultTurns: number }
  breakage?: Breakage
  maxTurns?: number
}

export interface Decided {
  runId: string
  callId: string
  by: string
  decision: 'approve' | 'deny'
  hash: string
  /** An approval sent with edited arguments: their hash, which the call then runs under. */
  editHash?: string
  ok: boolean
  answered: boolean
}

/** What a person sends beside the decision: the item's kind, an edit or an answer. */
interface PersonInput {
  kind?: 'approval' | 'question' | 'connect'
  args?: Record<string, unknown>
  answer?: string
  editHash?: string
}

/** A person's decision on `call` as the API would send it: a question answered, an edit. */
function personInput(call: Call, p: PersonAction): PersonInput {
  const item = call.approval!
  if (item.kind === 'question') {
    return {
      kind: 'question',
      ...(p.decision === 'approve' ? { answer: p.answer ?? item.ask?.choices?.[0] ?? 'yes' } : {}),
    }
  }
  if (p.edit && p.decision === 'approve') {
    return { kind: item.kind, args: p.edit, editHash: hashOf(call.name, p.edit) }
  }
  return { kind: item.kind }
}

export interface Outcome {
  violations: Violation[]
  turns: number
  trace: string[]
  injected: Map<string, number>
  states: number
  /** Each run as it ended: its result and each call's outcome (what a replay prints last). */
  runs: () => string[]
  /** What a delegated schedule exercised (the delegation pass prints the totals). */
  family: () => Record<string, number>
  /** What a Slack schedule exercised (the Slack pass prints the totals). */
  slackFigures: () => Record<string, number>
}

export class World {
  readonly sim: Sim
  readonly net: SimNetwork
  readonly d1: SimD1
  readonly runs: SimNamespace
  readonly env: Env
  readonly modelAsks: ModelAsk[] = []
  /** The MCP server (the SDK's own, test/fakes/fake-mcp.ts): every tools/call it ran. */
  readonly mcp = new FakeMcp()
  readonly decisions: Decided[] = []
  /** Every RPC call that reached an object, in order. */
  readonly calls: { runId: string; method: string; args: unknown[] }[] = []
  /** Run id of each run the client started, in order (the first, then a follow-up). */
  readonly runIds: string[] = []
  readonly #seenApprovals = new Set<string>()
  readonly checker: Checker
  /** A Slack-started schedule: Slack's Web API, the mention, the clicks in Slack. */
  readonly slack: SlackPart | undefined
  #breakOnce = true

  constructor(
    readonly scenario: Scenario,
    readonly options: WorldOptions,
  ) {
    this.sim = new Sim(options.chooser, options.budget)
    if (options.random) {
      this.sim.reorder = true
      this.sim.faultsUntil = options.random.faultTurns
    }
    this.net = new SimNetwork(this.sim)
    this.d1 = new SimD1(this.sim)
    this.runs = new SimNamespace((name) => {
      // Each instance gets the bindings a new isolate would: caches keyed by them start empty.
      const env = () => ({ ...this.env, RUN_INDEX: Object.create(this.d1) as SimD1 })
      const o = new SimObject(
        this.sim,
        name,
        (ctx, e) => new RunStore(ctx as never, e as never),
        env,
      )
      o.onCrash = (runId) => this.checker.onCrash(runId)
      o.onCall = (method, args) => this.calls.push({ runId: name, method, args })
      return o
    })
    this.env = {
      API_TOKEN: 'sim-token',
      WEBHOOK_SECRET: 'sim-webhook-secret',
      OPENAI_API_KEY: PROVIDER_KEY,
      OPENAI_BASE_URL: `https://${PROVIDER}/v1`,
      MODEL: 'gpt-test',
      MODEL_PROTOCOL: 'native',
      MODEL_MAX_RETRIES: '0',
      MODEL_STREAM: 'off',
      CONFIRM_POLICY: scenario.policy,
      APPROVAL_TTL_SECONDS: '600',
      ENABLED_TOOLS: `calculator,http_get,http_post${scenario.question ? ',ask_person' : ''}`,
      HTTP_ALLOWLIST: RECEIVER,
      HTTP_POST_IDEMPOTENT: String(scenario.idempotent),
      CALLBACK_ALLOWLIST: RECEIVER,
      CPU_MS: '30000',
      LOG_LEVEL: 'silent',
      RUN_INDEX: this.d1,
      RUNS: this.runs,
      // A delegating run: `lead` brings its delegates (`triage`, `default`) along.
      ...(scenario.delegated ? { ENABLED_AGENTS: 'lead' } : {}),
      ...(scenario.slack
        ? {
            ...slackEnv(scenario.people.map((p) => p.by)),
            SLACK_THREADS: new SimSlackThreads(() => this.env),
          }
        : {}),
      ...(scenario.mcp
        ? {
            MCP_SERVERS: JSON.stringify([
              {
                name: 'docs',
                url: `https://${FAKE_MCP_HOST}/mcp`,
                token_secret: 'DOCS_MCP_AUTH',
                timeout_ms: 2_000,
              },
            ]),
            DOCS_MCP_AUTH: FAKE_MCP_TOKEN,
          }
        : {}),
    } as unknown as Env
    const provider = new SimProvider(this.sim, this.scripts, this.modelAsks, (kind, detail) =>
      this.checker.fail(kind, detail),
    )
    provider.answersTwice = options.breakage === 'provider_twice'
    this.net.on(PROVIDER, provider.handler).on(RECEIVER, receiver(this.sim))
    this.net.on(FAKE_MCP_HOST, this.mcp.handler)
    for (const d of scenario.delegated ?? []) this.scripts.set(d.tag, d.script)
    useSimulation(this.sim, this.net.fetch as typeof fetch, options.seed)
    this.checker = new Checker(this)
    this.slack = scenario.slack
      ? new SlackPart(
          this.sim,
          this.net,
          this.runs,
          () => this.env,
          scenario.people,
          this.decisions,
          (kind, detail) => this.checker.fail(kind, detail),
          (runId) => this.committedState(runId),
          scenario.idempotent,
        )
      : undefined
    if (this.slack) {
      this.slack.postsTwice = options.breakage === 'slack_twice'
      this.slack.slack.dropsEdits = options.breakage === 'slack_drops_edit'
    }
  }

  readonly tag = 'sim'

  /** Every run: those the client started, in order, then the child runs (every other object). */
  allRunIds(): string[] {
    // An object a lost `start` call never reached has no run in it.
    const children = [...this.runs.objects.keys()].filter(
      (id) => !this.runIds.includes(id) && this.committedState(id) !== undefined,
    )
    return [...this.runIds, ...children]
  }

  /** The tag of a run's task (`sim:0`, a child's `sim:0.c1`): the key of its script. */
  tagOf(runId: string): string {
    const k = this.runIds.indexOf(runId)
    if (k >= 0) return `${this.tag}:${k}`
    const task = this.committedState(runId)?.task ?? ''
    return /^\[([^\]]+)\]/.exec(task)?.[1] ?? '?'
  }

  /** What the parent stored of its child's end for call `callId` (undefined: nothing yet). */
  childOutcome(parentId: string, callId: string): ChildOutcome | undefined {
    const o = this.runs.objects.get(parentId)
    return o ? this.#storageOf(o).getValue<ChildOutcome>(`child:${callId}`) : undefined
  }

  /** The run's committed state as a restarted object would load it (undefined: none yet). */
  committedState(runId: string): RunState | undefined {
    const o = this.runs.objects.get(runId)
    if (!o) return undefined
    const cached = this.#committed.get(runId)
    if (cached?.version === o.storage.version) return cached.state
    const state = this.#load(o)
    this.#committed.set(runId, { version: o.storage.version, state })
    return state
  }

  readonly #committed = new Map<string, { version: number; state: RunState | undefined }>()

  #load(o: SimObject): RunState | undefined {
    return this.#storageOf(o).loadState()
  }

  /** The object's committed storage, read as the run machine reads it. */
  #storageOf(o: SimObject): RunStorage {
    const sql = {
      exec: (q: string, ...b: unknown[]) => new SimSqlCursor(o.storage.peek(q, ...(b as never[]))),
    }
    return new RunStorage(sql as unknown as SqlStorage)
  }

  async run(): Promise<Outcome> {
    const { sim } = this
    const maxTurns = this.options.maxTurns ?? 4_000
    this.#start(0, this.scenario.script, undefined)
    let states = 0
    while (sim.turns < maxTurns) {
      const ev = sim.next()
      if (!ev) break
      const object = this.#objectOf(ev)
      let crashAtEnd: (() => void) | undefined
      if (object && this.#crashPointChanged(object)) {
        const crash = sim.fault('crash', `before ${ev.label}`, this.options.random ? 3 : 2, 0.03)
        if (crash === 1) {
          object.crash(`before ${ev.label}`)
          // An event of the dead instance is gone; a call or alarm for the object goes to the next.
          if (ev.owner) continue
        }
        if (crash === 2)
          crashAtEnd = () => object.crash(`at the end of ${ev.label}, before its commit`)
      }
      this.#maybeBreak(ev)
      await sim.turn(ev, crashAtEnd)
      states++
      this.#people()
      this.checker.afterTurn()
      if (this.checker.violations.length) break
    }
    if (!this.checker.violations.length) this.checker.atEnd(sim.turns >= maxTurns)
    return {
      violations: this.checker.violations,
      turns: sim.turns,
      trace: sim.trace,
      injected: sim.injected,
      states,
      runs: () => this.allRunIds().map((id) => this.#describe(id)),
      family: () => this.#family(),
      slackFigures: () => this.slack?.figures() ?? {},
    }
  }

  #family(): Record<string, number> {
    const child = (runId: string) => !this.runIds.includes(runId)
    const cancelled = (id: string) => this.committedState(id)?.result?.stopReason === 'cancelled'
    return {
      'child runs': this.allRunIds().filter(child).length,
      'child side effects': this.net.arrivals.filter(
        (a) => a.path === '/effect' && child((a.headers['idempotency-key'] ?? '').split(':')[0]!),
      ).length,
      'child approvals decided': this.decisions.filter((d) => d.ok && child(d.runId)).length,
      'parents cancelled': this.runIds.filter(cancelled).length,
      'children cancelled by the cascade': this.allRunIds().filter(
        (id) => child(id) && cancelled(id),
      ).length,
      'child reports (childFinished)': this.calls.filter((c) => c.method === 'childFinished')
        .length,
      'child crashes': [...this.runs.objects.values()]
        .filter((o) => child(o.name))
        .reduce((n, o) => n + o.crashes.length, 0),
    }
  }

  #describe(runId: string): string {
    const state = this.committedState(runId)
    if (!state) return `${runId}: no state`
    const calls = state.steps.flatMap((s) =>
      s.calls.map(
        (c) =>
          `    step ${s.i} ${c.id} (${c.name}): ${c.status}, ${c.kind ?? '-'}: ${(c.observation ?? '').slice(0, 120)}`,
      ),
    )
    const r = state.result
    return [
      `${runId}: ${state.phase}${r ? `, ok ${r.ok}, ${r.stopReason}` : ''}, ${state.usage.modelCalls} model calls`,
      ...calls,
    ].join('\n')
  }

  readonly #lastCrashPoint = new Map<SimObject, string>()

  /**
   * A crash here differs from the last crash point offered only if something durable or
   * outside changed since: a commit that wrote, a request that reached a host, the alarm's
   * state. A crash between two answers to the instance loses the same memory and leaves the same
   * storage and world, so it is offered once (the crash points are the distinct ones).
   */
  #crashPointChanged(o: SimObject): boolean {
    const point = `${o.storage.version}|${this.net.arrivals.length}|${this.d1.stats.executed}|${o.storage.alarmRunning}|${o.storage.alarm}`
    if (this.#lastCrashPoint.get(o) === point) return false
    this.#lastCrashPoint.set(o, point)
    return true
  }

  /** The running object an event belongs to or is for: it may crash just before it. */
  #objectOf(ev: SimEvent): SimObject | undefined {
    if (ev.target) {
      const o = this.runs.objects.get(ev.target)
      return o?.running ? o : undefined
    }
    if (!ev.owner?.alive) return undefined
    for (const o of this.runs.objects.values()) if (o.gen === ev.owner) return o
    return undefined
  }

  /** The client: POST /v1/runs through the route's own logic, retried with the same key. */
  #start(attempt: number, script: FakeReply[], continues: string | undefined): void {
    const key = `${this.tag}-${this.runIds.length}-${continues ?? 'first'}`
    const task = `[${this.tag}:${this.runIds.length}] Check the status and record 42 if it is green.`
    this.scripts.set(`${this.tag}:${this.runIds.length}`, script)
    if (this.slack && !continues)
      return this.slack.start(task, (id) => {
        if (this.runIds.includes(id)) return
        this.runIds.push(id)
        if (this.scenario.cancelAfterMs !== undefined) this.#cancel(id)
        if (this.scenario.deleteAfterMs !== undefined) this.#delete(id)
      })
    this.sim.schedule(
      `client POST /v1/runs${continues ? ' (continue)' : ''}${attempt ? ` retry ${attempt}` : ''}`,
      attempt ? 1_000 : 0,
      () => {
        startRun(this.env, {
          task,
          ...(this.scenario.delegated
            ? { agent: 'lead' }
            : {
                tools: [
                  'http_get',
                  'http_post',
                  'calculator',
                  ...(this.scenario.mcp ? ['docs__search', 'docs__delete_page'] : []),
                  ...(this.scenario.question ? ['ask_person'] : []),
                ],
              }),
          requestedBy: 'api:sim',
          // The API token that starts it (docs/security.md#who-sees-which-runs).
          owner: 'sim',
          idempotencyKey: key,
          ...(this.scenario.callback ? { callbackUrl: `https://${RECEIVER}/callback` } : {}),
          ...(this.scenario.callback && this.scenario.callbackEvents
            ? { callbackEvents: 'all' as const }
            : {}),
          ...(continues ? { continue: continues } : {}),
        }).then(
          (out) => {
            const id = out.view.id
            if (!this.runIds.includes(id)) this.runIds.push(id)
            this.sim.log(`  client: run ${id} ${out.created ? 'created' : 'exists'}`)
            if (this.scenario.cancelAfterMs !== undefined && !continues) this.#cancel(id)
          },
          (err: Error) => {
            this.sim.log(`  client: start failed: ${err.message}`)
            if (attempt < 8) this.#start(attempt + 1, script, continues)
            else this.checker.fail('stuck_run', `the run could not be started: ${err.message}`)
          },
        )
      },
      undefined,
    )
  }

  readonly scripts = new Map<string, FakeReply[]>()

  #cancel(runId: string): void {
    this.sim.schedule(
      `person cancels ${runId}`,
      this.scenario.cancelAfterMs!,
      () => {
        void this.runs
          .object(runId)
          .rpc<{ ok: boolean; message: string }>('cancel', ['api:dave', 'wrong incident'])
          .then(
            (a) => this.sim.log(`  cancel: ${a.message}`),
            () => {},
          )
      },
      undefined,
    )
  }

  /** Runs someone deleted (the object answered the delete): nothing of them is left to check. */
  readonly deleted = new Set<string>()

  #delete(runId: string): void {
    this.sim.schedule(
      `person deletes ${runId}`,
      this.scenario.deleteAfterMs!,
      () => {
        void this.runs
          .object(runId)
          .rpc<{ ok: boolean; status?: string }>('delete', ['api:erin'])
          .then(
            (a) => {
              this.sim.log(`  delete: ${a.status ?? 'refused'}`)
              if (a.ok) this.deleted.add(runId)
              if (a.ok) this.slack?.deleted(runId)
            },
            () => {
              this.sim.log('  delete: no answer, deletes again')
              this.#delete(runId)
            },
          )
      },
      undefined,
    )
  }

  /** People see each new pending approval (in Slack, the inbox) and act on it. */
  #people(): void {
    for (const runId of this.allRunIds()) {
      const state = this.committedState(runId)
      if (!state) continue
      this.#followUp(runId, state)
      for (const step of state.steps) {
        for (const call of step.calls) {
          if (call.status !== 'awaiting_approval' || !call.approval) continue
          const key = `${runId}/${call.id}`
          if (this.#seenApprovals.has(key)) continue
          this.#seenApprovals.add(key)
          this.scenario.people.forEach((p, k) => {
            if (p.inSlack) return
            const hash = p.staleHash
              ? `${call.approval!.hash.slice(0, -4)}0000`
              : call.approval!.hash
            const extra = personInput(call, p)
            this.sim.schedule(
              `person ${p.by} clicks ${p.decision} on ${call.id}`,
              p.afterMs ?? 100,
              () => this.#decide(runId, call.id, p.by, p.decision, hash, k, extra),
              undefined,
              true,
            )
          })
        }
      }
    }
  }

  #decide(
    runId: string,
    callId: string,
    by: string,
    decision: 'approve' | 'deny',
    hash: string,
    k: number,
    extra: PersonInput = {},
  ): void {
    const record: Decided = {
      runId,
      callId,
      by,
      decision,
      hash,
      ok: false,
      answered: false,
      ...(extra.editHash ? { editHash: extra.editHash } : {}),
    }
    this.decisions.push(record)
    const { editHash: _h, ...sent } = extra
    this.runs
      .object(runId)
      .rpc<{ ok: boolean; code?: string }>(
        'decide',
        [{ callId, decision, argsHash: hash, by, ...sent }],
        `decide ${by}`,
      )
      .then(
        (a) => {
          record.answered = true
          record.ok = a.ok
          this.sim.log(`  ${by}: ${a.ok ? 'decided' : `refused (${a.code})`}`)
        },
        () => {
          // The object died before answering: the person clicks again a little later.
          this.sim.log(`  ${by}: no answer, clicks again`)
          if (k < 8)
            this.sim.schedule(
              `person ${by} clicks ${decision} again`,
              2_000,
              () => this.#decide(runId, callId, by, decision, hash, k + 10, extra),
              undefined,
            )
        },
      )
  }

  #followed = false
  #followUp(runId: string, state: RunState): void {
    if (
      !this.scenario.followUp ||
      this.#followed ||
      runId !== this.runIds[0] ||
      state.phase !== 'done'
    )
      return
    this.#followed = true
    this.#start(0, this.scenario.followUp, runId)
  }

  #maybeBreak(ev: SimEvent): void {
    const b = this.options.breakage
    if (!b || !this.#breakOnce) return
    const object = this.#objectOf(ev) ?? [...this.runs.objects.values()][0]
    if (!object) return
    if (b === 'lose_commit' && ev.label.includes('POST receiver.test/effect answered')) {
      this.#breakOnce = false
      object.storage.loseNextCommit()
    }
    if (b === 'concurrent_alarm' && ev.label.startsWith('alarm →')) {
      this.#breakOnce = false
      object.concurrentAlarms = true
    }
  }
}
