/**
 * The simulator's one scheduler (docs/architecture.md#deterministic-simulation): a virtual clock,
 * a queue of pending events (timers, network arrivals and answers, alarms, RPC calls, people),
 * and turns. A turn fires one event and lets every promise it settles run to the next simulated
 * wait; then every object's storage commits and what the turn sent leaves (the output gate).
 * Nothing else in the process makes time pass or work happen, so a schedule's choices decide the
 * whole run.
 */
import type { Chooser } from './chooser'

/** A generation of a simulated object: its events die with it when it crashes. */
export interface Owner {
  alive: boolean
  name: string
}

export interface SimEvent {
  id: number
  at: number
  label: string
  owner: Owner | undefined
  /** Two people acting at once: their order is a choice even in the exhaustive explorer. */
  concurrent: boolean
  fire: () => void
  /** The object an RPC or alarm event is for (it may crash before the event). */
  target?: string
}

/** What a storage (or anything with uncommitted output) does at a turn's edges. */
export interface TurnParticipant {
  begin(): void
  commit(): void
}

export const SIM_EPOCH = Date.UTC(2026, 0, 1)

/** Faults a schedule may inject, each at most this many times (the exhaustive explorer's bounds). */
export interface FaultBudget {
  [kind: string]: number
}

export class Sim {
  now = SIM_EPOCH
  /** Bumped by every simulated platform call: the turn's end is when it stops moving. */
  activity = 0
  readonly trace: string[] = []
  readonly injected = new Map<string, number>()
  current: Owner | undefined
  /** Random mode: any ready event may go next (reordering), not only concurrent people. */
  reorder = false
  /** Faults stop after this many turns: then the run must settle by itself. */
  faultsUntil = Infinity
  turns = 0
  readonly #events: SimEvent[] = []
  #seq = 0
  readonly #participants = new Set<TurnParticipant>()
  #released: (() => void)[] = []
  readonly #budget: FaultBudget

  constructor(
    readonly chooser: Chooser,
    budget: FaultBudget,
  ) {
    this.#budget = { ...budget }
  }

  log(line: string): void {
    this.trace.push(`${String(this.now - SIM_EPOCH).padStart(8)}ms  ${line}`)
  }

  schedule(
    label: string,
    delayMs: number,
    fire: () => void,
    owner: Owner | undefined = this.current,
    concurrent = false,
  ): SimEvent {
    this.activity++
    const ev = {
      id: ++this.#seq,
      at: this.now + Math.max(0, delayMs),
      label,
      owner,
      concurrent,
      fire,
    }
    this.#events.push(ev)
    return ev
  }

  cancel(ev: SimEvent | undefined): void {
    if (!ev) return
    const i = this.#events.indexOf(ev)
    if (i >= 0) this.#events.splice(i, 1)
  }

  /** Runs after this turn's commit (what the output gate held: requests, RPC answers). */
  afterCommit(fn: () => void): void {
    this.#released.push(fn)
  }

  join(p: TurnParticipant): void {
    this.#participants.add(p)
  }

  /**
   * Whether to inject fault `kind` here, and which of its `options` variants (0: none). Asks the
   * chooser only while the budget of that kind lasts and faults have not stopped.
   */
  fault(kind: string, label: string, options = 2, p = 0.05): number {
    if (options < 2 || (this.#budget[kind] ?? 0) <= 0 || this.turns >= this.faultsUntil) return 0
    const chosen = this.chooser.pick(`${kind} ${label}`, options, p)
    if (chosen) {
      this.#budget[kind]!--
      this.injected.set(kind, (this.injected.get(kind) ?? 0) + 1)
      this.log(`FAULT ${kind}${options > 2 ? `#${chosen}` : ''} ${label}`)
    }
    return chosen
  }

  /** The events that may go next: those due, dead owners' dropped. */
  #ready(): SimEvent[] {
    for (let i = this.#events.length - 1; i >= 0; i--) {
      if (this.#events[i]!.owner?.alive === false) this.#events.splice(i, 1)
    }
    if (!this.#events.length) return []
    let due = this.#events.filter((e) => e.at <= this.now)
    if (!due.length) {
      this.now = Math.min(...this.#events.map((e) => e.at))
      due = this.#events.filter((e) => e.at <= this.now)
    }
    return due.sort((a, b) => a.at - b.at || a.id - b.id)
  }

  get pending(): number {
    return this.#events.filter((e) => e.owner?.alive !== false).length
  }

  /** The next event to fire (a choice where several could), or undefined when none is left. */
  next(): SimEvent | undefined {
    const ready = this.#ready()
    if (!ready.length) return undefined
    let pick = 0
    const faulting = this.turns < this.faultsUntil
    if (this.reorder && faulting && ready.length > 1) {
      pick = this.chooser.pick('order', ready.length, 0.3)
    } else {
      const people = ready.filter((e) => e.concurrent)
      if (people.length > 1 && ready[0]!.concurrent) {
        const k = this.chooser.pick(
          `order of ${people.map((e) => e.label).join(' | ')}`,
          people.length,
        )
        pick = ready.indexOf(people[k]!)
      }
    }
    const ev = ready[pick]!
    this.#events.splice(this.#events.indexOf(ev), 1)
    return ev
  }

  /** One turn: `ev` fires, its promises settle, storages commit, held output leaves. */
  async turn(ev: SimEvent, crashAtEnd?: () => void): Promise<void> {
    this.turns++
    for (const p of this.#participants) p.begin()
    this.current = ev.owner
    this.log(ev.label)
    try {
      ev.fire()
    } catch (err) {
      this.log(`  threw: ${(err as Error).message}`)
    }
    await this.settle()
    this.current = undefined
    // A crash at the turn's end drops its writes and everything the output gate held.
    if (crashAtEnd) {
      crashAtEnd()
      this.#released = []
    }
    for (const p of this.#participants) p.commit()
    const released = this.#released
    this.#released = []
    for (const fn of released) fn()
  }

  /** Lets promises run until nothing moves: every wait left is a simulated one. */
  async settle(): Promise<void> {
    let seen = -1
    for (let round = 0; round < 200; round++) {
      await new Promise<void>((r) => realSetImmediate(() => r()))
      if (this.activity === seen && round >= 2) return
      seen = this.activity
    }
  }
}

/** Node's own setImmediate, kept before the simulated globals replace the timers. */
export const realSetImmediate = globalThis.setImmediate
