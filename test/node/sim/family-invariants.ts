/**
 * The promises of delegation (docs/agents.md#delegation), checked beside the run's own
 * (invariants.ts): one child per delegated call, ever, with the id derived from the parent's run
 * and call; a parent's observation of a finished child is that child's result; the child's usage
 * is the one the parent added to its own.
 */
import { createHash } from 'node:crypto'
import type { Call, RunState } from '../../../src/kernel/state'
import type { ViolationKind } from './invariants'
import type { World } from './world'

type Fail = (kind: ViolationKind, detail: string) => void

/** The child id `childRunId` derives (computed here independently of the run machine). */
export function expectedChildId(parentId: string, callId: string): string {
  const hex = createHash('sha256').update(`edgeloop-child:${parentId}:${callId}`).digest('hex')
  return `run_${hex.slice(0, 32)}`
}

/** The delegated call's child run ended and the parent took its outcome as the observation. */
export function tookChildOutcome(call: Call): boolean {
  return (
    !!call.child && call.status === 'done' && !(call.observation ?? '').includes('was not finished')
  )
}

export class FamilyChecker {
  /** Every child object ever seen for a parent's call: one, always. */
  readonly #children = new Map<string, Set<string>>()

  constructor(
    private readonly world: World,
    private readonly fail: Fail,
  ) {}

  /** After every turn: each child object belongs to exactly one delegated call, and vice versa. */
  afterTurn(states: Map<string, RunState>): void {
    for (const [id, state] of states) {
      const p = state.parent
      if (p) {
        const key = `${p.runId}/${p.callId}`
        const seen = this.#children.get(key) ?? new Set<string>()
        seen.add(id)
        this.#children.set(key, seen)
        if (seen.size > 1)
          this.fail('duplicate_child', `call ${key} has ${seen.size} child runs: ${[...seen]}`)
        if (id !== expectedChildId(p.runId, p.callId))
          this.fail('duplicate_child', `child run ${id} of ${key} is not the derived id`)
      }
      for (const call of state.steps.flatMap((s) => s.calls)) {
        if (!call.child) continue
        const want = expectedChildId(id, call.id)
        if (call.child.runId !== want)
          this.fail(
            'duplicate_child',
            `${id}/${call.id} names child ${call.child.runId}, not ${want}`,
          )
      }
    }
  }

  /** Once settled: the observation of each finished child is its result; usage matches. */
  atEnd(parentId: string, state: RunState): void {
    for (const call of state.steps.flatMap((s) => s.calls)) {
      if (!call.child) continue
      const key = `${parentId}/${call.id}`
      const child = this.world.committedState(call.child.runId)
      if (!child) {
        // A start call lost on the way: no child was created, and the parent must say so.
        const obs = call.observation ?? ''
        const said = obs.includes('does not exist') || obs.includes('was not finished')
        if (call.status !== 'done' || !said)
          this.fail(
            'child_mismatch',
            `${key}: no child run was created, the call is ${call.status}: ${obs.slice(0, 160)}`,
          )
        continue
      }
      if (!child.result) {
        this.fail('stuck_run', `${key}: child run ${call.child.runId} never ended`)
        continue
      }
      if (!tookChildOutcome(call)) {
        // The run ended while it waited for this child: it must have cancelled it (the cascade).
        const by = `run:${parentId}`
        const told = this.world.calls.some(
          (c) => c.runId === call.child!.runId && c.method === 'cancel' && c.args[0] === by,
        )
        if (call.status === 'done' && !told)
          this.fail(
            'orphan_child',
            `${key}: the run ended, its child ${call.child.runId} was never told to cancel`,
          )
        continue
      }
      const outcome = this.world.childOutcome(parentId, call.id)
      if (!outcome) {
        this.fail('child_mismatch', `${key} is done, its parent never stored the child's outcome`)
        continue
      }
      const r = child.result
      const obs = call.observation ?? ''
      const matches = r.ok
        ? obs === r.answer
        : obs.includes(`child run ${call.child.runId}`) &&
          obs.includes(`stopReason ${r.stopReason}`)
      if (!matches)
        this.fail(
          'child_mismatch',
          `${key}: observation "${obs.slice(0, 160)}", the child ended ${r.stopReason} (ok ${r.ok}) with "${r.answer.slice(0, 80)}"`,
        )
      if (outcome.usage.modelCalls !== child.usage.modelCalls)
        this.fail(
          'usage_miscount',
          `${key}: the parent added ${outcome.usage.modelCalls} model calls of its child, which counts ${child.usage.modelCalls}`,
        )
    }
  }

  /** Once settled: every child run is the one its parent's call names (no orphan runs on). */
  child(childId: string, state: RunState): void {
    const p = state.parent
    if (!p) return
    const call = this.world
      .committedState(p.runId)
      ?.steps.flatMap((s) => s.calls)
      .find((c) => c.id === p.callId)
    if (call?.child?.runId !== childId)
      this.fail(
        'orphan_child',
        `child run ${childId} (${state.result?.stopReason ?? state.phase}) runs for ${p.runId}/${p.callId}, which ${call ? `is ${call.status}, ${call.kind ?? '-'}: ${(call.observation ?? '').slice(0, 100)}` : 'does not exist'}`,
      )
  }

  /** The model calls of children the parent added to its own usage. */
  childCalls(parentId: string, state: RunState): number {
    let sum = 0
    for (const call of state.steps.flatMap((s) => s.calls)) {
      if (!tookChildOutcome(call)) continue
      sum += this.world.childOutcome(parentId, call.id)?.usage.modelCalls ?? 0
    }
    return sum
  }
}
