/**
 * The promises a run keeps, checked after every turn of every schedule and once more when the
 * schedule has settled (docs/architecture.md#deterministic-simulation). Judged from the committed
 * storage a restarted object would load, the run index in D1 and what the world saw: every request
 * that reached a host, every click and its answer, every crash.
 */
import { createHash } from 'node:crypto'
import { canonicalJson } from '../../../src/kernel/canonical'
import type { RunState } from '../../../src/kernel/state'
import { statusOf } from '../../../src/runs/run-status'
import { FAKE_MCP_HOST } from '../../fakes/fake-mcp'
import type { FakeReply } from '../../fakes/fake-openai'
import type { World } from './world'
import { FamilyChecker } from './family-invariants'
import type { SlackViolation } from './slack-invariants'

export type ViolationKind =
  | 'unapproved_side_effect'
  | 'side_effect_before_started'
  | 'duplicate_side_effect'
  | 'unknown_not_reported'
  | 'spurious_unknown'
  | 'phantom_result'
  | 'lost_step'
  | 'duplicate_step'
  | 'approval_decided_twice'
  | 'approval_undecided'
  | 'stuck_run'
  | 'implicit_result'
  | 'usage_miscount'
  | 'event_log'
  | 'callback'
  | 'index_diverged'
  | 'corrupt_storage'
  | 'duplicate_child'
  | 'child_mismatch'
  | 'orphan_child'
  | SlackViolation

export interface Violation {
  kind: ViolationKind
  detail: string
  turn: number
}

/** Which invariant each broken platform of the self-check must trip. */
export const SELF_CHECK_EXPECTS: Record<string, ViolationKind[]> = {
  lose_commit: [
    'duplicate_side_effect',
    'lost_step',
    'event_log',
    'phantom_result',
    'unknown_not_reported',
    'corrupt_storage',
    'duplicate_step',
  ],
  concurrent_alarm: [
    'duplicate_step',
    'lost_step',
    'usage_miscount',
    'event_log',
    'duplicate_side_effect',
    'corrupt_storage',
  ],
  provider_twice: ['usage_miscount'],
  slack_twice: ['duplicate_slack_message'],
  slack_drops_edit: ['slack_edit_lost'],
}

export function hashOf(name: string, args: Record<string, unknown>): string {
  return createHash('sha256').update(canonicalJson({ name, args })).digest('hex')
}

function scriptedCalls(reply: FakeReply | undefined): string[] {
  return reply?.kind === 'tool_calls' ? reply.calls.map((c) => c.id ?? '?') : []
}

export class Checker {
  readonly violations: Violation[] = []
  /** Side effects that had a durable `started` record and no result when their object crashed. */
  readonly lostStarted = new Set<string>()
  #effectsSeen = 0
  readonly #effects = new Map<string, { keys: string[] }>()
  readonly #decided = new Map<string, string>()

  readonly #family: FamilyChecker

  constructor(private readonly world: World) {
    this.#family = new FamilyChecker(world, (kind, detail) => this.fail(kind, detail))
  }

  fail(kind: ViolationKind, detail: string): void {
    if (this.violations.some((v) => v.kind === kind && v.detail === detail)) return
    this.violations.push({ kind, detail, turn: this.world.sim.turns })
    this.world.sim.log(`VIOLATION ${kind}: ${detail}`)
  }

  /** A crash: what was started and has no result is now of unknown outcome. */
  onCrash(runId: string): void {
    const state = this.#state(runId)
    for (const step of state?.steps ?? []) {
      for (const call of step.calls)
        if (call.status === 'started') this.lostStarted.add(`${runId}/${call.id}`)
    }
  }

  #state(runId: string): RunState | undefined {
    try {
      return this.world.committedState(runId)
    } catch (err) {
      this.fail('corrupt_storage', `run ${runId}: ${(err as Error).message}`)
      return undefined
    }
  }

  afterTurn(): void {
    this.#newEffects()
    const states = new Map<string, RunState>()
    for (const runId of this.world.allRunIds()) {
      const state = this.#state(runId)
      if (state) this.#structure(runId, state)
      if (state) states.set(runId, state)
    }
    this.#family.afterTurn(states)
    this.world.slack?.afterTurn()
  }

  #mcpSeen = 0

  /** Each side effect that reached its host: approved for these exact arguments, started, once. */
  #newEffects(): void {
    const arrivals = this.world.net.arrivals
    for (; this.#effectsSeen < arrivals.length; this.#effectsSeen++) {
      const a = arrivals[this.#effectsSeen]!
      if (a.path !== '/effect') continue
      const args = { url: `https://${a.host}${a.path}`, body: JSON.parse(a.body) as unknown }
      this.#effect('http_post', args, a.headers['idempotency-key'] ?? '')
    }
    const calls = this.world.mcp.calls
    for (; this.#mcpSeen < calls.length; this.#mcpSeen++) {
      const c = calls[this.#mcpSeen]!
      if (c.tool === 'delete_page')
        this.#effect('docs__delete_page', c.args, String(c.idempotencyKey))
    }
  }

  #effect(tool: string, args: Record<string, unknown>, key: string): void {
    const [runId = '', callId = ''] = key.split(':')
    const wireHash = hashOf(tool, args)
    const call = this.#state(runId)
      ?.steps.flatMap((s) => s.calls)
      .find((c) => c.id === callId)
    const what = `${tool} ${callId} of ${runId}`
    // A deleted run's records are gone by design (docs/operations.md#deletion).
    if (!call && this.world.deleted.has(runId)) return
    if (!call) {
      this.fail(
        'side_effect_before_started',
        `${what} reached its host with no durable record of the call`,
      )
      return
    }
    if (call.status !== 'started' && call.status !== 'done') {
      this.fail(
        'side_effect_before_started',
        `${what} reached its host while its record says ${call.status}`,
      )
    }
    if (this.world.scenario.policy === 'ask') {
      const approval = call.approval
      const clicked = this.world.decisions.some(
        (d) =>
          d.runId === runId &&
          d.callId === callId &&
          d.decision === 'approve' &&
          (d.hash === wireHash || d.editHash === wireHash) &&
          d.by === approval?.decidedBy,
      )
      if (approval?.decision !== 'approved' || approval.hash !== wireHash || !clicked) {
        this.fail(
          'unapproved_side_effect',
          `${what} ran without an approval of its arguments' hash (approval ${approval?.decision ?? 'none'} by ${approval?.decidedBy ?? 'nobody'})`,
        )
      }
    }
    const seen = this.#effects.get(`${runId}/${callId}`) ?? { keys: [] }
    seen.keys.push(key)
    this.#effects.set(`${runId}/${callId}`, seen)
    if (seen.keys.length > 1 && !this.#idempotent(tool)) {
      this.fail(
        'duplicate_side_effect',
        `${what} reached its host ${seen.keys.length} times (not idempotent)`,
      )
    }
  }

  /** http_post as the scenario declares it; the MCP server's delete_page is destructive. */
  #idempotent(tool: string): boolean {
    return tool === 'http_post' && this.world.scenario.idempotent
  }

  /** Committed storage: steps and calls each once, as the model replied; decisions final; events numbered. */
  #structure(runId: string, state: RunState): void {
    const script = this.#script(runId)
    state.steps.forEach((step, k) => {
      if (step.i !== k)
        this.fail(
          step.i < k ? 'duplicate_step' : 'lost_step',
          `run ${runId}: step ${k} is stored as step ${step.i}`,
        )
      const want = scriptedCalls(script?.[k])
      const got = step.calls.map((c) => c.id)
      if (want.join() !== got.join())
        this.fail(
          'lost_step',
          `run ${runId}: step ${k} has calls [${got}], the model's reply for it had [${want}]`,
        )
      for (const call of step.calls) {
        const decision = call.approval?.decision
        if (!decision) continue
        const key = `${runId}/${call.id}`
        const first = this.#decided.get(key)
        const now = `${decision} by ${call.approval!.decidedBy}`
        if (first === undefined) this.#decided.set(key, now)
        else if (first !== now) this.fail('approval_decided_twice', `${key}: ${first}, then ${now}`)
      }
    })
    const ids = state.steps.flatMap((s) => s.calls.map((c) => c.id))
    if (new Set(ids).size !== ids.length)
      this.fail('duplicate_step', `run ${runId}: call ids ${ids.join(',')}`)
    const seqs = this.#events(runId).map((e) => e.seq)
    if (seqs.some((s, k) => s !== k + 1))
      this.fail('event_log', `run ${runId}: event numbers ${seqs.join(',')}`)
  }

  #script(runId: string): FakeReply[] | undefined {
    return this.world.scripts.get(this.world.tagOf(runId))
  }

  readonly #eventCache = new Map<
    string,
    { version: number; rows: { seq: number; type: string; data: string }[] }
  >()

  #events(runId: string): { seq: number; type: string; data: string }[] {
    const storage = this.world.runs.objects.get(runId)?.storage
    if (!storage) return []
    const cached = this.#eventCache.get(runId)
    if (cached?.version === storage.version) return cached.rows
    const rows = this.#readEvents(storage)
    this.#eventCache.set(runId, { version: storage.version, rows })
    return rows
  }

  #readEvents(
    storage: NonNullable<ReturnType<World['runs']['objects']['get']>>['storage'],
  ): { seq: number; type: string; data: string }[] {
    const table = storage.peek<{ n: number }>(
      `SELECT COUNT(*) AS n FROM sqlite_master WHERE name = 'event'`,
    )
    if (!table[0]?.n) return []
    return storage.peek('SELECT seq, type, data FROM event ORDER BY seq')
  }

  /** Once the schedule has settled (faults stopped, nothing left to happen). */
  atEnd(outOfTurns: boolean): void {
    if (!this.world.runIds.length) return this.fail('stuck_run', 'no run was started')
    this.world.slack?.atEnd()
    for (const runId of this.world.allRunIds()) {
      const state = this.#state(runId)
      if (!state && this.world.deleted.has(runId)) continue
      if (!state) {
        this.fail('stuck_run', `run ${runId} has no stored state`)
        continue
      }
      if (state.phase !== 'done' || !state.result) {
        this.fail(
          'stuck_run',
          `run ${runId} ${outOfTurns ? 'still going after the turn limit' : 'stopped moving'} in phase ${state.phase}`,
        )
        continue
      }
      this.#result(runId, state)
      this.#sideEffects(runId, state)
      this.#usage(runId, state)
      this.#eventLog(runId, state)
      this.#approvals(runId, state)
      this.#index(runId, state)
      this.#family.atEnd(runId, state)
      this.#family.child(runId, state)
      // Only the runs the client started report to its callback (a child reports to its parent).
      if (this.world.scenario.callback && this.world.runIds.includes(runId))
        this.#callbacks(runId, state)
    }
  }

  #result(runId: string, state: RunState): void {
    const r = state.result!
    if (!r.stopReason) this.fail('implicit_result', `run ${runId} ended without a stop reason`)
    if (r.ok && (r.stopReason !== 'finish' || !r.answer))
      this.fail('implicit_result', `run ${runId}: ok with ${r.stopReason} and answer "${r.answer}"`)
    if (!r.ok && r.answer !== '') this.fail('implicit_result', `run ${runId} failed with an answer`)
    const script = this.#script(runId)
    if (r.stopReason === 'finish' && state.steps.length !== script?.length) {
      this.fail(
        'lost_step',
        `run ${runId} finished with ${state.steps.length} of ${script?.length} steps`,
      )
    }
  }

  #sideEffects(runId: string, state: RunState): void {
    for (const call of state.steps.flatMap((s) => s.calls)) {
      if (call.name !== 'http_post' && call.name !== 'docs__delete_page') continue
      const key = `${runId}/${call.id}`
      const reached = this.#effects.get(key)?.keys.length ?? 0
      const lost = this.lostStarted.has(key)
      const idem = this.#idempotent(call.name)
      // A request that a fault hit (timed out, lost, its answer lost) may have run: unknown is honest.
      const net = this.world.net
      const uncertain =
        net.faulted.has(`${runId}:${call.id}`) ||
        (call.name.startsWith('docs__') && net.faultedHosts.has(FAKE_MCP_HOST))
      if (call.kind === 'outcome_unknown' && !uncertain && (!lost || idem)) {
        this.fail(
          'spurious_unknown',
          `${key} reported outcome unknown with no crash or fault while it ran${idem ? ' (idempotent: it should have been retried)' : ''}`,
        )
      }
      if (lost && !idem && call.kind !== 'outcome_unknown')
        this.fail(
          'unknown_not_reported',
          `${key} was cut off by a crash and is reported ${call.kind}`,
        )
      if (call.kind === 'ok' && reached === 0)
        this.fail('phantom_result', `${key} has a result, the receiver never saw it`)
      if (idem && new Set(this.#effects.get(key)?.keys ?? []).size > 1)
        this.fail('duplicate_side_effect', `${key} was retried with another idempotency key`)
    }
  }

  #usage(runId: string, state: RunState): void {
    const tag = this.world.tagOf(runId)
    const arrived = this.world.modelAsks.filter((a) => a.tag === tag).length
    // A run's own requests carry its task (a parent's later ones carry a child's task only as
    // the arguments of its ask_ call, without the `Task: ` prefix).
    const sent = this.world.net.sent.filter(
      (s) => s.host.startsWith('api.') && s.body.includes(`Task: [${tag}]`),
    ).length
    // A parent adds the model calls of each child whose outcome it took (summed exactly).
    const children = this.#family.childCalls(runId, state)
    const counted = state.usage.modelCalls - children
    if (counted < arrived || counted > sent) {
      this.fail(
        'usage_miscount',
        `run ${runId} counts ${counted} model calls of its own (${children} more of its children); ${sent} were sent, ${arrived} reached the provider`,
      )
    }
  }

  #eventLog(runId: string, state: RunState): void {
    const events = this.#events(runId)
    const replied = events
      .filter((e) => e.type === 'model_replied')
      .map((e) => (JSON.parse(e.data) as { step: number }).step)
    if (replied.join() !== state.steps.map((s) => s.i).join()) {
      this.fail(
        'event_log',
        `run ${runId}: model_replied for steps [${replied}], the trace has ${state.steps.length} steps`,
      )
    }
    const finished = events.filter((e) => e.type === 'run_finished')
    const last = events.at(-1)
    if (finished.length !== 1 || last?.type !== 'run_finished') {
      this.fail(
        'event_log',
        `run ${runId}: ${finished.length} run_finished events, last event ${last?.type}`,
      )
      return
    }
    const data = JSON.parse(last.data) as { ok: boolean; stopReason: string; stepCount: number }
    const r = state.result!
    if (
      data.ok !== r.ok ||
      data.stopReason !== r.stopReason ||
      data.stepCount !== state.steps.length
    ) {
      this.fail(
        'event_log',
        `run ${runId}: run_finished says ${data.stopReason}/${data.ok}, the trace ${r.stopReason}/${r.ok}`,
      )
    }
  }

  #approvals(runId: string, state: RunState): void {
    for (const call of state.steps.flatMap((s) => s.calls)) {
      if (!call.approval) continue
      const key = `${runId}/${call.id}`
      if (!call.approval.decision)
        this.fail('approval_undecided', `${key} ended with its approval undecided`)
      const oks = this.world.decisions.filter(
        (d) => d.runId === runId && d.callId === call.id && d.ok,
      )
      if (oks.length > 1)
        this.fail(
          'approval_decided_twice',
          `${key}: ${oks.map((d) => `${d.by} ${d.decision}`).join(' and ')} were each told their decision won`,
        )
      const won = oks[0]
      const as = won?.decision === 'approve' ? 'approved' : 'denied'
      if (won && (call.approval.decision !== as || call.approval.decidedBy !== won.by)) {
        this.fail(
          'approval_decided_twice',
          `${key}: ${won.by} was told "${won.decision}" won, the run recorded ${call.approval.decision} by ${call.approval.decidedBy}`,
        )
      }
    }
  }

  #index(runId: string, state: RunState): void {
    let row: { status: string; version: number; steps: number } | undefined
    try {
      row = this.world.d1.db
        .prepare('SELECT status, version, steps FROM runs WHERE id = ?')
        .get(runId) as typeof row
    } catch {
      row = undefined
    }
    const last = this.#events(runId).at(-1)?.seq ?? 0
    const want = { status: statusOf(state), version: last, steps: state.steps.length }
    if (
      !row ||
      row.status !== want.status ||
      row.version !== want.version ||
      row.steps !== want.steps
    ) {
      this.fail(
        'index_diverged',
        `run ${runId}: index row ${JSON.stringify(row ?? null)}, the run ${JSON.stringify(want)}`,
      )
    }
  }

  #callbacks(runId: string, state: RunState): void {
    const stored = new Map(this.#events(runId).map((e) => [e.seq, e]))
    const got = this.world.net.arrivals.filter(
      (a) => a.path === '/callback' && a.headers['x-edgeloop-run-id'] === runId,
    )
    let final = 0
    for (const a of got) {
      const body = JSON.parse(a.body) as {
        seq?: number
        type?: string
        data?: unknown
        stopReason?: string
        ok?: boolean
      }
      if (a.headers['x-edgeloop-event']) {
        const e = stored.get(body.seq ?? -1)
        if (
          !e ||
          e.type !== body.type ||
          JSON.stringify(JSON.parse(e.data)) !== JSON.stringify(body.data)
        ) {
          this.fail(
            'callback',
            `run ${runId}: callback event ${body.seq} (${body.type}) does not match the stored event`,
          )
        }
      } else {
        final++
        if (body.stopReason !== state.result!.stopReason || body.ok !== state.result!.ok) {
          this.fail(
            'callback',
            `run ${runId}: the result callback says ${body.stopReason}, the run ${state.result!.stopReason}`,
          )
        }
      }
    }
    if (!final)
      this.fail('callback', `run ${runId}: the result was never delivered to its callback`)
  }
}
