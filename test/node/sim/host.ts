/**
 * Durable Objects as the simulator hosts them: one storage per object, an instance built on first
 * use (the real `RunStore` class, constructed with a simulated `ctx` and `env`), crashes that
 * throw the instance away with everything it was waiting for, the alarm as the platform runs it
 * (at least once: a failed or crashed handler is retried with backoff; a schedule may also fire
 * it twice in a row or late), and RPC through a namespace stub, answered after the callee's turn
 * commits.
 */
import type { Sim, Owner } from './sim'
import { SimObjectStorage } from './sim-storage'

/** What the hosted class must look like: the RunStore's RPC methods and its alarm. */
export interface Hosted {
  alarm(): Promise<void>
}

export type Factory = (ctx: unknown, env: unknown) => Hosted

const ALARM_RETRY_BASE_MS = 2_000

export class SimObject {
  readonly storage: SimObjectStorage
  gen: Owner
  #instance: Hosted | undefined
  #alarmEvent: ReturnType<Sim['schedule']> | undefined
  #alarmRetries = 0
  /** The stored alarm time the pending alarm event serves. */
  #alarmFor: number | undefined
  /** Self-check only: the platform starts a second alarm handler while one runs. */
  concurrentAlarms = false
  readonly crashes: number[] = []
  /** Told of each crash, after the turn's writes are dropped (the checker). */
  onCrash: (name: string) => void = () => {}
  /** Told of each RPC call that reached an instance (the checker's evidence of a cascade). */
  onCall: (method: string, args: unknown[]) => void = () => {}

  constructor(
    private readonly sim: Sim,
    readonly name: string,
    private readonly factory: Factory,
    private readonly env: () => unknown,
  ) {
    this.storage = new SimObjectStorage(sim, name)
    this.gen = { alive: true, name: `${name}#1` }
    this.storage.onCommit = () => this.#armAlarm()
  }

  get instance(): Hosted {
    this.#instance ??= this.factory(this.#ctx(), this.env())
    return this.#instance
  }

  #ctx(): unknown {
    return {
      storage: this.storage,
      id: { toString: () => this.name, name: this.name },
      waitUntil: () => {},
      blockConcurrencyWhile: async <T>(fn: () => Promise<T>) => fn(),
    }
  }

  get running(): boolean {
    return this.#instance !== undefined
  }

  /** The process dies: the instance and every event it waited for are gone; storage stays. */
  crash(why: string): void {
    this.sim.log(`CRASH ${this.name}: ${why}`)
    this.crashes.push(this.sim.now)
    this.storage.rollback()
    this.onCrash(this.name)
    this.gen.alive = false
    for (const call of this.#inFlight) call.reset()
    this.#inFlight.clear()
    this.gen = { alive: true, name: `${this.name}#${this.crashes.length + 1}` }
    this.#instance = undefined
    if (this.storage.alarmRunning) {
      // The handler never finished: the platform retries it.
      this.storage.alarmRunning = false
      this.#retryAlarm()
    }
    this.#armAlarm()
  }

  /**
   * Calls `method` on the object as an RPC: delivered as an event to whichever instance is alive
   * then (a new one after a crash), answered after its turn commits. When the instance that took
   * the call dies before answering, the caller's promise rejects, as a stub's does.
   */
  rpc<T>(method: string, args: unknown[], label = method): Promise<T> {
    const sim = this.sim
    const caller = sim.current
    sim.activity++
    return new Promise<T>((resolve, reject) => {
      const entry = {
        gen: undefined as Owner | undefined,
        reset: () =>
          sim.schedule(
            `rpc ${label} failed: object reset`,
            1,
            () =>
              reject(new Error('Durable Object reset because its code was updated or it crashed')),
            caller,
          ),
      }
      // Between objects (a child's report, a parent starting, polling or cancelling a child), the
      // call may be lost on the way (1) or its answer lost (2): the caller gets an error.
      const lost = caller ? sim.fault('rpc', `rpc ${label} → ${this.name}`, 3, 0.1) : 0
      const lose = () =>
        sim.schedule(
          `rpc ${label} failed: ${lost === 1 ? 'lost on the way' : 'answer lost'}`,
          1,
          () => reject(new Error('Network connection lost.')),
          caller,
        )
      const answer = (gen: Owner, settle: () => void) => {
        this.#inFlight.delete(entry)
        if (!gen.alive) return
        if (lost === 2) lose()
        else sim.schedule(`rpc ${label} answered`, 1, settle, caller)
      }
      const deliver = () => {
        if (lost === 1) return void lose()
        const ev = sim.schedule(
          `rpc ${label} → ${this.name}`,
          1,
          () => {
            const gen = this.gen
            // The turn is the object's: what it sends and arms dies with this instance.
            sim.current = gen
            entry.gen = gen
            this.#inFlight.add(entry)
            this.onCall(method, args)
            const target = this.instance as unknown as Record<
              string,
              (...a: unknown[]) => Promise<T>
            >
            target[method]!(...structuredClone(args)).then(
              (out) => sim.afterCommit(() => answer(gen, () => resolve(clone(out)))),
              (err: Error) => sim.afterCommit(() => answer(gen, () => reject(err))),
            )
          },
          undefined,
        )
        ev.target = this.name
      }
      // Sent when the caller's turn commits (the output gate), unless the caller is outside.
      if (caller) sim.afterCommit(deliver)
      else deliver()
    })
  }

  readonly #inFlight = new Set<{ gen: Owner | undefined; reset: () => void }>()

  /** Makes sure a pending alarm has its event (after a commit or a crash). */
  #armAlarm(): void {
    const at = this.storage.alarm
    if (at === null || this.storage.alarmRunning) {
      if (at === null) {
        this.sim.cancel(this.#alarmEvent)
        this.#alarmEvent = undefined
      }
      return
    }
    if (this.#alarmEvent && this.#alarmFor === at) return
    this.sim.cancel(this.#alarmEvent)
    this.#alarmFor = at
    const late = this.sim.fault('late', `late alarm of ${this.name}`, 2, 0.1) ? 30_000 : 0
    this.#alarmEvent = this.sim.schedule(
      `alarm → ${this.name}`,
      at - this.sim.now + late,
      () => this.#fireAlarm(),
      undefined,
    )
    this.#alarmEvent.target = this.name
  }

  /** Runs the handler; `duplicate`: a second delivery of an alarm that already ran. */
  #fireAlarm(duplicate = false): void {
    if (!duplicate) this.#alarmEvent = undefined
    if (this.storage.alarmRunning) return
    // 1: the platform fails to run the handler (retried); 2: it delivers it twice in a row.
    const fault = duplicate ? 0 : this.sim.fault('alarm', `alarm of ${this.name}`, 3, 0.05)
    if (fault === 1) {
      this.storage.alarm = null
      this.#retryAlarm()
      this.#armAlarm()
      return
    }
    if (!duplicate) this.storage.alarm = null
    this.storage.alarmRunning = true
    const gen = this.gen
    this.sim.current = gen
    const done = (err?: Error) =>
      this.sim.afterCommit(() => {
        if (!gen.alive) return
        this.storage.alarmRunning = false
        if (err) {
          this.sim.log(`  alarm of ${this.name} threw: ${err.message}`)
          this.#retryAlarm()
        } else this.#alarmRetries = 0
        if (fault === 2) {
          const again = () => this.#fireAlarm(true)
          this.sim.schedule(`alarm again (duplicate) → ${this.name}`, 0, again, undefined)
        }
        this.#armAlarm()
      })
    this.instance.alarm().then(() => done(), done)
    // Broken platform (self-check): a second handler at once, although alarms never overlap and
    // an object never has two live instances. (A second handler on the same instance is
    // harmless: RunStore's slice guard skips it, see docs/architecture.md#deterministic-simulation.)
    if (this.concurrentAlarms) {
      this.concurrentAlarms = false
      this.sim.log(
        `  BROKEN platform runs a second alarm handler of ${this.name} at once, in a second instance`,
      )
      this.factory(this.#ctx(), this.env())
        .alarm()
        .catch(() => {})
    }
  }

  #retryAlarm(): void {
    const delay = ALARM_RETRY_BASE_MS * 2 ** Math.min(this.#alarmRetries++, 5)
    const at = this.sim.now + delay
    this.storage.alarm = this.storage.alarm === null ? at : Math.min(this.storage.alarm, at)
  }
}

function clone<T>(v: T): T {
  try {
    return structuredClone(v)
  } catch {
    return v
  }
}

/** A `DurableObjectNamespace` whose stubs call into simulated objects by RPC. */
export class SimNamespace {
  readonly objects = new Map<string, SimObject>()
  constructor(private readonly create: (name: string) => SimObject) {}

  idFromName(name: string): { name: string; toString(): string } {
    return { name, toString: () => name }
  }

  get(id: { name: string }): unknown {
    const object = this.object(id.name)
    return new Proxy(
      {},
      {
        get: (_t, method) =>
          typeof method === 'string' && method !== 'then'
            ? (...args: unknown[]) => object.rpc(method, args)
            : undefined,
      },
    )
  }

  object(name: string): SimObject {
    let o = this.objects.get(name)
    if (!o) {
      o = this.create(name)
      this.objects.set(name, o)
    }
    return o
  }
}
